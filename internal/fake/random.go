package fake

import (
	"crypto/rand"
	"math/big"
)

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomSecret is n random letters, digits, '_' and '-': the tokens,
// secrets and ids of the platform fakes.
func randomSecret(n int) string { return randomFrom(alnum+"_-", n) }

// randomAlnum is n random letters and digits: the keys and tokens of the
// relay and webhook fakes.
func randomAlnum(n int) string { return randomFrom(alnum, n) }

// randomFrom is n characters drawn at random from alphabet.
func randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}
