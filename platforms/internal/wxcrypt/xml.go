package wxcrypt

import (
	"bytes"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxBody caps a callback's body: an event is a few hundred bytes.
const MaxBody = 64 << 10

// ErrXML is the error of a body that is not a callback message.
var ErrXML = errors.New("the body is not a callback XML message")

// Message is a callback's XML, plain or decrypted: the outer envelope of
// an encrypted one has ToUserName, AgentID and Encrypt only.
type Message struct {
	XMLName      xml.Name `xml:"xml"`
	ToUserName   string   `xml:"ToUserName"`
	FromUserName string   `xml:"FromUserName"`
	CreateTime   int64    `xml:"CreateTime"`
	MsgType      string   `xml:"MsgType"`
	Content      string   `xml:"Content"`
	MsgID        string   `xml:"MsgId"`
	Event        string   `xml:"Event"`
	EventKey     string   `xml:"EventKey"`
	Ticket       string   `xml:"Ticket"`
	AgentID      string   `xml:"AgentID"`
	Encrypt      string   `xml:"Encrypt"`
}

// Parse reads a callback's XML (at most MaxBody bytes).
func Parse(body []byte) (Message, error) {
	var m Message
	if len(body) > MaxBody {
		return m, ErrXML
	}
	if err := xml.Unmarshal(body, &m); err != nil {
		return m, ErrXML
	}
	return m, nil
}

// cdata writes s as CDATA, splitting any "]]>" in it.
func cdata(b *bytes.Buffer, name, s string) {
	b.WriteString("<" + name + "><![CDATA[")
	b.WriteString(strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>"))
	b.WriteString("]]></" + name + ">")
}

// TextReply is the XML of a passive text reply to a user (to) from the
// account or corp (from).
func TextReply(to, from, content string, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("<xml>")
	cdata(&b, "ToUserName", to)
	cdata(&b, "FromUserName", from)
	b.WriteString("<CreateTime>" + strconv.FormatInt(now.Unix(), 10) + "</CreateTime>")
	cdata(&b, "MsgType", "text")
	cdata(&b, "Content", content)
	b.WriteString("</xml>")
	return b.Bytes()
}

// Seal encrypts a reply for receiveID and wraps it in the signed envelope
// the platform takes: Encrypt, MsgSignature, TimeStamp and Nonce.
func Seal(token string, key []byte, receiveID string, reply []byte, now time.Time) ([]byte, error) {
	enc, err := Encrypt(key, reply, receiveID)
	if err != nil {
		return nil, err
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	nonce := Nonce()
	var b bytes.Buffer
	b.WriteString("<xml>")
	cdata(&b, "Encrypt", enc)
	cdata(&b, "MsgSignature", Signature(token, ts, nonce, enc))
	b.WriteString("<TimeStamp>" + ts + "</TimeStamp>")
	cdata(&b, "Nonce", nonce)
	b.WriteString("</xml>")
	return b.Bytes(), nil
}

// Nonce is a random string of ten digits.
func Nonce() string {
	var r [10]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		r[i] = '0' + r[i]%10
	}
	return string(r[:])
}
