package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/push"
)

func userCommands() []adminEntry {
	return []adminEntry{
		{"user", "create", "--account ID --email E [--role member|operator] [--password-stdin]", func() adminCmd { return &userCreate{} }},
		{"user", "list", "[--account ID]", func() adminCmd { return &userList{} }},
		{"user", "reset-password", "--id ID", func() adminCmd { return &userResetPassword{} }},
		{"user", "remove", "--id ID", func() adminCmd { return &userRemove{} }},
	}
}

// userOut is a user as admin prints it: never its password hash.
type userOut struct {
	ID         int64      `json:"id"`
	Account    int64      `json:"account"`
	Email      string     `json:"email"`
	Role       string     `json:"role"`
	CreatedAt  time.Time  `json:"created_at"`
	SignedInAt *time.Time `json:"signed_in_at"`
}

func userJSON(u push.User) userOut {
	return userOut{ID: u.ID, Account: u.AccountID, Email: u.Email, Role: string(u.Role), CreatedAt: u.CreatedAt.UTC(), SignedInAt: optTime(u.SignedInAt)}
}

// generatedPasswordLen is the length of a password admin generates: 20
// base62 characters, about 119 bits.
const generatedPasswordLen = 20

// generatePassword returns generatedPasswordLen characters drawn uniformly
// from base62 with crypto/rand.
func generatePassword() (string, error) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	const limit = 256 - 256%len(alphabet) // bytes at or above it would favour the first characters
	out := make([]byte, 0, generatedPasswordLen)
	var buf [64]byte
	for len(out) < generatedPasswordLen {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("generate a password: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < generatedPasswordLen {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}

// maxPasswordInput bounds what --password-stdin reads.
const maxPasswordInput = 4096

// readPassword reads a password from r: all of it, less one trailing
// newline ("\n" or "\r\n"), which a shell's echo or a file adds.
func readPassword(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("--password-stdin: there is no standard input to read the password from")
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPasswordInput+1))
	if err != nil {
		return "", fmt.Errorf("--password-stdin: read the password: %w", err)
	}
	if len(data) > maxPasswordInput {
		return "", fmt.Errorf("--password-stdin: the input is longer than %d bytes: give the password alone", maxPasswordInput)
	}
	s := string(data)
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		s = t
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	return s, nil
}

type userCreate struct {
	account       int64
	email, role   string
	passwordStdin bool
	stdin         io.Reader
}

func (c *userCreate) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id")
	fs.StringVar(&c.email, "email", "", "the user's email address, with which they sign in")
	fs.StringVar(&c.role, "role", string(push.RoleMember), "member (of the account) or operator (of the service)")
	fs.BoolVar(&c.passwordStdin, "password-stdin", false, "read the password from standard input (one trailing newline dropped); without it a password is generated and printed once")
}

func (c *userCreate) setStdin(r io.Reader) { c.stdin = r }

func (c *userCreate) check() error {
	if err := need("account", c.account > 0); err != nil {
		return err
	}
	return need("email", c.email != "")
}

func (c *userCreate) run(ctx context.Context, n *node.Node) (any, error) {
	var password string
	var err error
	if c.passwordStdin {
		password, err = readPassword(c.stdin)
	} else {
		password, err = generatePassword()
	}
	if err != nil {
		return nil, err
	}
	u, err := n.Engine.Users().Create(ctx, push.System(), push.UserCreate{AccountID: c.account, Email: c.email, Password: password, Role: push.Role(c.role)})
	if err != nil {
		return nil, err
	}
	if c.passwordStdin {
		return userJSON(u), nil
	}
	return struct {
		userOut
		Password string `json:"password"`
	}{userJSON(u), password}, nil
}

type userList struct{ account int64 }

func (c *userList) flags(fs *flag.FlagSet) {
	fs.Int64Var(&c.account, "account", 0, "account id (default: every account's users)")
}

func (c *userList) run(ctx context.Context, n *node.Node) (any, error) {
	return listAll(func(cursor string) (push.Page[push.User], error) {
		return n.Engine.Users().List(ctx, push.System(), push.UserFilter{AccountID: c.account, Limit: push.MaxPageSize, Cursor: cursor})
	}, userJSON)
}

type userResetPassword struct{ id int64 }

func (c *userResetPassword) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "user id") }

func (c *userResetPassword) check() error { return need("id", c.id > 0) }

func (c *userResetPassword) run(ctx context.Context, n *node.Node) (any, error) {
	plain, err := n.Engine.Users().ResetPassword(ctx, push.System(), c.id)
	if err != nil {
		return nil, err
	}
	return struct {
		ID       int64  `json:"id"`
		Password string `json:"password"`
	}{c.id, plain}, nil
}

type userRemove struct{ id int64 }

func (c *userRemove) flags(fs *flag.FlagSet) { fs.Int64Var(&c.id, "id", 0, "user id") }

func (c *userRemove) check() error { return need("id", c.id > 0) }

func (c *userRemove) run(ctx context.Context, n *node.Node) (any, error) {
	if err := n.Engine.Users().Remove(ctx, push.System(), c.id); err != nil {
		return nil, err
	}
	return struct {
		ID      int64 `json:"id"`
		Removed bool  `json:"removed"`
	}{c.id, true}, nil
}
