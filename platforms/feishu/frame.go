package feishu

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The long connection carries binary protobuf frames (pbbp2.Frame, proto2)
// with nine fields; only these few are read and written, so the codec is
// written out here rather than generated:
//
//	SeqID uint64 = 1; LogID uint64 = 2; service int32 = 3; method int32 = 4;
//	headers repeated Header{key string = 1; value string = 2} = 5;
//	payload_encoding string = 6; payload_type string = 7; payload bytes = 8;
//	LogIDNew string = 9

// Frame methods.
const (
	methodControl = 0 // ping and pong
	methodData    = 1 // events (and card callbacks)
)

// maxFrame caps a frame (and a reassembled payload) the client accepts.
const maxFrame = 1 << 20

// header is one of a frame's headers.
type header struct{ key, value string }

// frame is one message of the long connection.
type frame struct {
	seqID, logID    uint64
	service, method int32
	headers         []header
	payloadEncoding string
	payloadType     string
	payload         []byte
	logIDNew        string
}

// get returns the value of a header ("" when absent).
func (f *frame) get(key string) string {
	for _, h := range f.headers {
		if h.key == key {
			return h.value
		}
	}
	return ""
}

// marshal encodes the frame; the required fields are always written.
func (f *frame) marshal() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, f.seqID)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, f.logID)
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(f.service)))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(f.method)))
	for _, h := range f.headers {
		var hb []byte
		hb = protowire.AppendTag(hb, 1, protowire.BytesType)
		hb = protowire.AppendString(hb, h.key)
		hb = protowire.AppendTag(hb, 2, protowire.BytesType)
		hb = protowire.AppendString(hb, h.value)
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, hb)
	}
	for _, s := range []struct {
		num protowire.Number
		v   string
	}{{6, f.payloadEncoding}, {7, f.payloadType}} {
		if s.v != "" {
			b = protowire.AppendTag(b, s.num, protowire.BytesType)
			b = protowire.AppendString(b, s.v)
		}
	}
	if f.payload != nil {
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendBytes(b, f.payload)
	}
	if f.logIDNew != "" {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendString(b, f.logIDNew)
	}
	return b
}

var errFrame = errors.New("not a long-connection frame")

// unmarshalFrame decodes a frame; unknown fields are skipped, and a frame
// without its required fields is refused.
func unmarshalFrame(b []byte) (frame, error) {
	var f frame
	if len(b) > maxFrame {
		return f, fmt.Errorf("%w: %d bytes", errFrame, len(b))
	}
	var seen uint8
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return f, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num >= 1 && num <= 4 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return f, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(n))
			}
			b = b[n:]
			seen |= 1 << (num - 1)
			switch num {
			case 1:
				f.seqID = v
			case 2:
				f.logID = v
			case 3:
				f.service = int32(v)
			case 4:
				f.method = int32(v)
			}
		case num >= 5 && num <= 9 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return f, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 5:
				h, err := unmarshalHeader(v)
				if err != nil {
					return f, err
				}
				f.headers = append(f.headers, h)
			case 6:
				f.payloadEncoding = string(v)
			case 7:
				f.payloadType = string(v)
			case 8:
				f.payload = append([]byte{}, v...)
			case 9:
				f.logIDNew = string(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return f, fmt.Errorf("%w: %v", errFrame, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if seen != 0xf {
		return f, fmt.Errorf("%w: a required field is missing", errFrame)
	}
	return f, nil
}

func unmarshalHeader(b []byte) (header, error) {
	var h header
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return h, fmt.Errorf("%w: a header: %v", errFrame, protowire.ParseError(n))
		}
		b = b[n:]
		if (num == 1 || num == 2) && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return h, fmt.Errorf("%w: a header: %v", errFrame, protowire.ParseError(n))
			}
			b = b[n:]
			if num == 1 {
				h.key = string(v)
			} else {
				h.value = string(v)
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return h, fmt.Errorf("%w: a header: %v", errFrame, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return h, nil
}
