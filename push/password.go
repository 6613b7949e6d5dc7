package push

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PasswordHasher turns passwords into stored hashes and checks them. The
// engine needs one for users to sign in (package password has argon2id);
// without it the user verbs are refused.
type PasswordHasher interface {
	// Hash returns the stored form of a password: a string that holds
	// the algorithm and its parameters with the hash.
	Hash(password string) (string, error)
	// Verify reports whether password matches hash, and whether the hash
	// should be replaced by a new Hash of it (its parameters are not the
	// current ones). It takes about as long whether or not it matches.
	Verify(password, hash string) (ok, rehash bool, err error)
}

// The password policy: MinPassword to MaxPassword characters, not only
// spaces, not one character repeated, not the email or its name part, and
// not one of the most used passwords.
const (
	MinPassword = 10
	MaxPassword = 128
)

// ValidatePassword checks a new password against the policy. email, when
// given, is the user's: a password may not be it.
func ValidatePassword(password, email string) error {
	n := utf8.RuneCountInString(password)
	weak := func(why string) error {
		return Errorf(Invalid, "weak_password", "the password %s: choose %d to %d characters that are hard to guess, such as four unrelated words", why, MinPassword, MaxPassword)
	}
	switch {
	case !utf8.ValidString(password):
		return weak("is not valid UTF-8")
	case n < MinPassword:
		return weak("is shorter than " + strconv.Itoa(MinPassword) + " characters")
	case n > MaxPassword:
		return weak("is longer than " + strconv.Itoa(MaxPassword) + " characters")
	case strings.TrimFunc(password, unicode.IsSpace) == "":
		return weak("is only spaces")
	case strings.Count(password, password[:1]) == len(password):
		return weak("is one character repeated")
	}
	lower := strings.ToLower(password)
	if email != "" {
		email = strings.ToLower(email)
		name, _, _ := strings.Cut(email, "@")
		if lower == email || lower == name || len(name) >= 4 && strings.Contains(lower, name) {
			return weak("contains the email address")
		}
	}
	for _, common := range commonPasswords() {
		if lower == common {
			return weak("is one of the most used passwords")
		}
	}
	return nil
}

// commonPasswords are the most used passwords of at least MinPassword
// characters, from the published lists of leaked passwords; a password
// equal to one (ignoring case) is refused.
func commonPasswords() []string {
	return []string{
		"1234567890", "12345678910", "123456789a", "1234567890a", "0123456789", "0987654321", "1111111111",
		"1q2w3e4r5t", "1qaz2wsx3edc", "qwertyuiop", "qwertyuiop123", "qwerty123456", "qwe123qwe123", "asdfghjkl1",
		"password123", "password1234", "password12", "passw0rd123", "p@ssw0rd123", "iloveyou123", "princess123",
		"football123", "baseball123", "sunshine123", "administrator", "admin123456", "welcome123", "welcome1234",
		"letmein123", "changeme123", "trustno1234", "zaq12wsxcde", "abcdefghij", "abcd1234567", "a1b2c3d4e5",
		"aaaaaaaaaa1", "woaini1314", "5201314520", "1314520520", "qq1234567890", "123qweasdzxc",
	}
}
