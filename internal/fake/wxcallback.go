package fake

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The callbacks of WeChat Official Accounts and WeCom apps, as the real
// platforms make them: a message XML pushed to the server URL of the
// account's server configuration, signed with its Token (signature =
// sha1 of the sorted token, timestamp and nonce; msg_signature adds the
// ciphertext), and in the compatible and safe modes (WeCom: always)
// encrypted with AES-256-CBC under the EncodingAESKey, the plaintext
// random(16) ‖ length(4) ‖ message ‖ receiveid padded with PKCS#7 to 32
// bytes. The server's answer within 5 s is its passive reply, which the
// fake decrypts and checks as the platform does. This is written apart
// from Herald's own implementation, so that each checks the other.

// Modes of a WeChat server configuration.
const (
	WeChatPlain      = "plain"      // 明文模式: plaintext, signature only
	WeChatCompatible = "compatible" // 兼容模式: plaintext and ciphertext
	WeChatSafe       = "safe"       // 安全模式: ciphertext only
)

// WxCallbackToken returns a random callback Token (32 letters and digits).
func WxCallbackToken() string { return randomAlnum(32) }

// WxAESKey returns a random EncodingAESKey (43 letters and digits).
func WxAESKey() string {
	for {
		k := randomAlnum(43)
		if b, err := base64.StdEncoding.DecodeString(k + "="); err == nil && len(b) == 32 {
			return k
		}
	}
}

// WxTamper spoils a callback the way an attacker or a misconfiguration
// would, for the tests of refusals.
type WxTamper struct {
	Token     string        // sign with this token instead of the account's
	Signature string        // send this signature (and msg_signature) instead
	Age       time.Duration // date the request this long ago
	AESKey    string        // encrypt with this EncodingAESKey instead
	ReceiveID string        // encrypt for this app instead
	Cipher    string        // send this ciphertext instead
}

// WxPush is what became of one callback: the server's HTTP status, the
// passive reply's text ("" for none), and what was wrong with the reply,
// as the platform would find it ("" when it was right).
type WxPush struct {
	Status  int
	Reply   string
	Problem string
	Err     error
}

// wxServer is an account's (or app's) server configuration.
type wxServer struct {
	url, token string
	key        []byte // nil in plain mode
	mode       string
	receiveID  string // AppID or CorpID
	wecom      bool
	agentID    int64
	account    string // the gh_ id (WeChat) or CorpID (WeCom): ToUserName
}

func wxSign(parts ...string) string {
	s := append([]string(nil), parts...)
	sort.Strings(s)
	sum := sha1.Sum([]byte(strings.Join(s, "")))
	return hex.EncodeToString(sum[:])
}

func wxKey(encodingAESKey string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(encodingAESKey + "=")
	if err != nil || len(k) != 32 {
		return nil, errors.New("the EncodingAESKey is not 43 characters of base64")
	}
	return k, nil
}

func wxEncrypt(key []byte, msg []byte, receiveID string) string {
	var plain bytes.Buffer
	r := make([]byte, 16)
	_, _ = rand.Read(r)
	plain.Write(r)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(msg)))
	plain.Write(n[:])
	plain.Write(msg)
	plain.WriteString(receiveID)
	pad := 32 - plain.Len()%32
	plain.Write(bytes.Repeat([]byte{byte(pad)}, pad))
	block, _ := aes.NewCipher(key)
	out := make([]byte, plain.Len())
	cipher.NewCBCEncrypter(block, key[:16]).CryptBlocks(out, plain.Bytes())
	return base64.StdEncoding.EncodeToString(out)
}

func wxDecrypt(key []byte, b64, receiveID string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(data) == 0 || len(data)%16 != 0 {
		return nil, errors.New("the ciphertext is not base64 of whole AES blocks")
	}
	block, _ := aes.NewCipher(key)
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, key[:16]).CryptBlocks(plain, data)
	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > 32 || pad > len(plain) || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, errors.New("the padding is not PKCS#7 to 32 bytes")
	}
	plain = plain[:len(plain)-pad]
	if len(plain) < 20 {
		return nil, errors.New("the plaintext is too short")
	}
	n := int(binary.BigEndian.Uint32(plain[16:20]))
	if n > len(plain)-20 {
		return nil, errors.New("the message length is wrong")
	}
	if id := string(plain[20+n:]); id != receiveID {
		return nil, fmt.Errorf("the message is for %q, not %q", id, receiveID)
	}
	return plain[20 : 20+n], nil
}

// wxCDATA is an XML element with CDATA text.
func wxCDATA(name, s string) string {
	return "<" + name + "><![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]></" + name + ">"
}

// wxInbound is a message of a user to the account, as the platform words
// it.
type wxInbound struct {
	from             string
	createTime       int64
	msgType, content string
	msgID            int64
	event, eventKey  string
	ticket           string
}

func (s *wxServer) xml(m wxInbound) []byte {
	var b strings.Builder
	b.WriteString("<xml>" + wxCDATA("ToUserName", s.account) + wxCDATA("FromUserName", m.from))
	b.WriteString("<CreateTime>" + strconv.FormatInt(m.createTime, 10) + "</CreateTime>" + wxCDATA("MsgType", m.msgType))
	switch m.msgType {
	case "text":
		b.WriteString(wxCDATA("Content", m.content) + "<MsgId>" + strconv.FormatInt(m.msgID, 10) + "</MsgId>")
	case "event":
		b.WriteString(wxCDATA("Event", m.event))
		if m.eventKey != "" || s.wecom {
			b.WriteString(wxCDATA("EventKey", m.eventKey))
		}
		if m.ticket != "" {
			b.WriteString(wxCDATA("Ticket", m.ticket))
		}
	}
	if s.wecom {
		b.WriteString("<AgentID>" + strconv.FormatInt(s.agentID, 10) + "</AgentID>")
	}
	b.WriteString("</xml>")
	return []byte(b.String())
}

// deliver pushes a message to the server as the platform does and checks
// the passive reply.
func (s *wxServer) deliver(m wxInbound, t WxTamper) WxPush {
	inner := s.xml(m)
	now := time.Now().Add(-t.Age)
	ts, nonce := strconv.FormatInt(now.Unix(), 10), randomFrom("0123456789", 10)
	token := s.token
	if t.Token != "" {
		token = t.Token
	}
	q := url.Values{"timestamp": {ts}, "nonce": {nonce}}
	body := inner
	encrypted := s.wecom || s.mode != WeChatPlain
	if encrypted {
		key, receiveID := s.key, s.receiveID
		if t.AESKey != "" {
			key, _ = wxKey(t.AESKey)
		}
		if t.ReceiveID != "" {
			receiveID = t.ReceiveID
		}
		enc := wxEncrypt(key, inner, receiveID)
		if t.Cipher != "" {
			enc = t.Cipher
		}
		sig := wxSign(token, ts, nonce, enc)
		if t.Signature != "" {
			sig = t.Signature
		}
		q.Set("msg_signature", sig)
		switch {
		case s.wecom:
			body = []byte("<xml>" + wxCDATA("ToUserName", s.account) + "<AgentID>" + strconv.FormatInt(s.agentID, 10) + "</AgentID>" + wxCDATA("Encrypt", enc) + "</xml>")
		case s.mode == WeChatSafe:
			body = []byte("<xml>" + wxCDATA("ToUserName", s.account) + wxCDATA("Encrypt", enc) + "</xml>")
		default: // compatible: the plaintext fields and the ciphertext
			body = []byte(strings.TrimSuffix(string(inner), "</xml>") + wxCDATA("Encrypt", enc) + "</xml>")
		}
		if !s.wecom {
			q.Set("encrypt_type", "aes")
		}
	}
	if !s.wecom {
		sig := wxSign(token, ts, nonce)
		if t.Signature != "" {
			sig = t.Signature
		}
		q.Set("signature", sig)
		q.Set("openid", m.from)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return WxPush{Err: err}
	}
	req.Header.Set("Content-Type", "text/xml")
	// The platform waits 5 s for the answer.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return WxPush{Err: err}
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	out := WxPush{Status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		return out
	}
	out.Reply, out.Problem = s.readReply(ans, m.from, encrypted)
	return out
}

// wxReply is a passive reply, plain or decrypted, and its envelope.
type wxReply struct {
	ToUserName   string `xml:"ToUserName"`
	FromUserName string `xml:"FromUserName"`
	CreateTime   int64  `xml:"CreateTime"`
	MsgType      string `xml:"MsgType"`
	Content      string `xml:"Content"`
	Encrypt      string `xml:"Encrypt"`
	MsgSignature string `xml:"MsgSignature"`
	TimeStamp    string `xml:"TimeStamp"`
	Nonce        string `xml:"Nonce"`
}

// readReply checks a passive reply as the platform does: "" or "success"
// is no reply; otherwise an XML text message to the user from the
// account, encrypted and signed when the callback was.
func (s *wxServer) readReply(ans []byte, user string, encrypted bool) (text, problem string) {
	if len(ans) == 0 || string(ans) == "success" {
		return "", ""
	}
	var r wxReply
	if err := xml.Unmarshal(ans, &r); err != nil {
		return "", "the reply is not XML"
	}
	if encrypted {
		if r.Encrypt == "" {
			return "", "the reply is not encrypted"
		}
		if r.MsgSignature != wxSign(s.token, r.TimeStamp, r.Nonce, r.Encrypt) {
			return "", "the reply's MsgSignature does not verify"
		}
		plain, err := wxDecrypt(s.key, r.Encrypt, s.receiveID)
		if err != nil {
			return "", "the reply does not decrypt: " + err.Error()
		}
		r = wxReply{}
		if err := xml.Unmarshal(plain, &r); err != nil {
			return "", "the decrypted reply is not XML"
		}
	} else if r.Encrypt != "" {
		return "", "an encrypted reply to a plaintext message"
	}
	switch {
	case r.ToUserName != user:
		return r.Content, fmt.Sprintf("the reply is to %q, not the user %q", r.ToUserName, user)
	case r.FromUserName != s.account:
		return r.Content, fmt.Sprintf("the reply is from %q, not the account %q", r.FromUserName, s.account)
	case r.MsgType != "text" || r.Content == "":
		return r.Content, "the reply is not a text message with content"
	case r.CreateTime == 0:
		return r.Content, "the reply has no CreateTime"
	}
	return r.Content, ""
}

// check makes the platform's URL check of the server (the GET handshake):
// WeChat sends a plain echostr and wants it back; WeCom sends it
// encrypted and wants the plaintext.
func (s *wxServer) check() error {
	ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), randomFrom("0123456789", 10)
	want := randomFrom("0123456789", 19)
	q := url.Values{"timestamp": {ts}, "nonce": {nonce}}
	if s.wecom {
		echo := wxEncrypt(s.key, []byte(want), s.receiveID)
		q.Set("echostr", echo)
		q.Set("msg_signature", wxSign(s.token, ts, nonce, echo))
	} else {
		q.Set("echostr", want)
		q.Set("signature", wxSign(s.token, ts, nonce))
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(s.url + "?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK || string(got) != want {
		return fmt.Errorf("the URL check failed: HTTP %d %q, want %q", resp.StatusCode, got, want)
	}
	return nil
}
