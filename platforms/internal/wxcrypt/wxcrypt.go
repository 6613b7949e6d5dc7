// Package wxcrypt is the callback crypto that WeChat Official Accounts
// and WeCom apps share: the SHA-1 signatures over the sorted token,
// timestamp, nonce (and ciphertext), the time window of a request, and
// the AES-256-CBC message encryption of their "safe mode" keyed by the
// EncodingAESKey, whose plaintext is random(16) ‖ length(4, big-endian) ‖
// message ‖ receiveid (the AppID, or the WeCom CorpID), padded with
// PKCS#7 to 32 bytes.
package wxcrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"
)

// KeyLen is the length of an EncodingAESKey: 43 characters, the base64 of
// 32 bytes without its padding.
const KeyLen = 43

// Window is how far a request's timestamp may be from now.
const Window = 5 * time.Minute

// MaxCipher caps a ciphertext (base64) the package decrypts: events are
// small.
const MaxCipher = 256 << 10

// blockPad is the PKCS#7 padding block of the scheme (not AES's 16).
const blockPad = 32

// Errors of Decrypt; none quotes the key or the message.
var (
	ErrKey       = errors.New("the EncodingAESKey is not 43 characters of base64 for 32 bytes")
	ErrCipher    = errors.New("the ciphertext does not decrypt")
	ErrReceiveID = errors.New("the message is for another app")
)

// ValidKey reports whether s has the shape of an EncodingAESKey: 43
// letters and digits that decode to 32 bytes.
func ValidKey(s string) bool {
	if len(s) != KeyLen {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	_, err := Key(s)
	return err == nil
}

// Key decodes an EncodingAESKey into the 32-byte AES key.
func Key(encodingAESKey string) ([]byte, error) {
	if len(encodingAESKey) != KeyLen {
		return nil, ErrKey
	}
	k, err := base64.StdEncoding.DecodeString(encodingAESKey + "=")
	if err != nil || len(k) != 32 {
		return nil, ErrKey
	}
	return k, nil
}

// Signature is hex(sha1(the parts sorted and joined)).
func Signature(parts ...string) string {
	s := append([]string(nil), parts...)
	sort.Strings(s)
	sum := sha1.Sum([]byte(strings.Join(s, "")))
	return hex.EncodeToString(sum[:])
}

// Verify reports, in constant time, whether got is the signature of the
// parts (hex, either case).
func Verify(got string, parts ...string) bool {
	want := Signature(parts...)
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(got)), []byte(want)) == 1
}

// Fresh reports whether a request's timestamp (Unix seconds) is within
// Window of now.
func Fresh(timestamp string, now time.Time) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || len(timestamp) > 12 {
		return false
	}
	d := now.Sub(time.Unix(ts, 0))
	return d <= Window && d >= -Window
}

// Decrypt decrypts a base64 ciphertext with the key, checks that it is for
// receiveID, and returns the message.
func Decrypt(key []byte, b64, receiveID string) ([]byte, error) {
	if len(key) != 32 {
		return nil, ErrKey
	}
	if len(b64) > MaxCipher {
		return nil, ErrCipher
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(data) < blockPad || len(data)%aes.BlockSize != 0 {
		return nil, ErrCipher
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, ErrKey
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, key[:aes.BlockSize]).CryptBlocks(plain, data)
	n := int(plain[len(plain)-1])
	if n < 1 || n > blockPad || n > len(plain) {
		return nil, ErrCipher
	}
	for _, b := range plain[len(plain)-n:] {
		if int(b) != n {
			return nil, ErrCipher
		}
	}
	plain = plain[:len(plain)-n]
	if len(plain) < 20 {
		return nil, ErrCipher
	}
	size := binary.BigEndian.Uint32(plain[16:20])
	rest := plain[20:]
	if uint64(size) > uint64(len(rest)) {
		return nil, ErrCipher
	}
	msg, id := rest[:size], rest[size:]
	if subtle.ConstantTimeCompare(id, []byte(receiveID)) != 1 {
		return nil, ErrReceiveID
	}
	return msg, nil
}

// Encrypt encrypts a message for receiveID with the key and returns the
// base64 ciphertext.
func Encrypt(key, msg []byte, receiveID string) (string, error) {
	if len(key) != 32 {
		return "", ErrKey
	}
	var buf bytes.Buffer
	random := make([]byte, 16)
	if _, err := rand.Read(random); err != nil {
		return "", err
	}
	buf.Write(random)
	_ = binary.Write(&buf, binary.BigEndian, uint32(len(msg)))
	buf.Write(msg)
	buf.WriteString(receiveID)
	n := blockPad - buf.Len()%blockPad
	buf.Write(bytes.Repeat([]byte{byte(n)}, n))
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", ErrKey
	}
	out := make([]byte, buf.Len())
	cipher.NewCBCEncrypter(block, key[:aes.BlockSize]).CryptBlocks(out, buf.Bytes())
	return base64.StdEncoding.EncodeToString(out), nil
}
