package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/transport"
)

const adminUsage = `Usage: herald admin <noun> <verb> [flags]

  account create --name N            account suspend --id ID     account activate --id ID
  account show --id ID               account list
  key create --account ID [--expires 720h]   key revoke --id ID   key list --account ID
  key import --account ID --key PLAIN [--expires D]
  bot create --account ID --platform P --name N --config JSON    bot list --account ID
  target bind --bot ID --type user|group --address A [--name N]  target list --bot ID
  points set --account ID --balance N
  job show --id JOBID                job resolve --id JOBID --outcome succeeded|failed
  secrets status                     secrets rotate   (re-seal bot credentials with the current secret key)

Every command prints one JSON object on stdout. --db (or HERALD_DB) selects the database.
`

// Admin output objects. Credentials and key hashes are never printed.
type accountOut struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Points int64  `json:"points"`
	Status string `json:"status"`
}

type keyOut struct {
	ID        int64      `json:"id"`
	Account   int64      `json:"account"`
	Prefix    string     `json:"prefix"`
	Hint      string     `json:"hint"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Revoked   bool       `json:"revoked"`
}

type botOut struct {
	ID       int64  `json:"id"`
	Account  int64  `json:"account"`
	Platform string `json:"platform"`
	Name     string `json:"name"`
}

type targetOut struct {
	ID      int64  `json:"id"`
	Bot     int64  `json:"bot"`
	Type    string `json:"type"`
	Address string `json:"address"`
}

type items[T any] struct {
	Items []T `json:"items"`
}

// itemsOf is a list command's output: xs converted by conv, as
// {"items": […]} (an empty list, never null).
func itemsOf[T, O any](xs []T, conv func(T) O) items[O] {
	out := items[O]{Items: make([]O, 0, len(xs))}
	for _, x := range xs {
		out.Items = append(out.Items, conv(x))
	}
	return out
}

func accountJSON(a push.Account) accountOut {
	return accountOut{ID: a.ID, Name: a.Name, Points: a.Points, Status: string(a.Status)}
}

func botJSON(b push.Bot) botOut {
	return botOut{ID: b.ID, Account: b.AccountID, Platform: b.Platform, Name: b.Name}
}

func targetJSON(t push.Target) targetOut {
	return targetOut{ID: t.ID, Bot: t.BotID, Type: string(t.Type), Address: t.Address}
}

func keyJSON(k push.APIKey) keyOut {
	o := keyOut{ID: k.ID, Account: k.AccountID, Prefix: k.Prefix, Hint: k.Hint, CreatedAt: k.CreatedAt.UTC(), Revoked: k.Revoked()}
	if !k.ExpiresAt.IsZero() {
		t := k.ExpiresAt.UTC()
		o.ExpiresAt = &t
	}
	return o
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// admin runs one admin command and returns the exit code: 0 with one JSON
// object on stdout, or 1 with the error on stderr.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, adminUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 1
	}
	out, err := adminRun(ctx, args[0], args[1], args[2:], stderr)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	if err := printJSON(stdout, out); err != nil {
		fmt.Fprintln(stderr, "herald admin:", err)
		return 1
	}
	return 0
}

// adminCmd is one admin command: it defines its flags and returns what it
// does once they are parsed.
type adminCmd func(fs *flag.FlagSet) func(ctx context.Context, n *node) (any, error)

func adminRun(ctx context.Context, noun, verb string, args []string, stderr io.Writer) (any, error) {
	cmd, ok := adminCommands()[noun+" "+verb]
	if !ok {
		return nil, fmt.Errorf("unknown command %q\n\n%s", noun+" "+verb, adminUsage)
	}
	fs := newFlagSet("admin "+noun+" "+verb, stderr)
	var ef engineFlags
	ef.register(fs)
	do := cmd(fs)
	if err := parseFlags(fs, args, ef.names()); err != nil {
		return nil, err
	}
	n, err := openNode(ctx, &ef, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	defer n.close()
	out, err := do(ctx, n)
	if err != nil {
		var pe *push.Error
		if errors.As(err, &pe) && pe.Message != "" {
			return nil, errors.New(pe.Message)
		}
		return nil, err
	}
	return out, nil
}

func need(name string, ok bool) error {
	if !ok {
		return fmt.Errorf("--%s is required", name)
	}
	return nil
}

func adminCommands() map[string]adminCmd {
	return map[string]adminCmd{
		"account create": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			name := fs.String("name", "", "account name")
			return func(ctx context.Context, n *node) (any, error) {
				a, err := n.eng.CreateAccount(ctx, *name)
				return accountJSON(a), err
			}
		},
		"account suspend":  accountStatus(push.AccountSuspended),
		"account activate": accountStatus(push.AccountActive),
		"account show": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			id := fs.Int64("id", 0, "account id")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("id", *id > 0); err != nil {
					return nil, err
				}
				a, err := n.eng.Account(ctx, *id)
				return accountJSON(a), err
			}
		},
		"account list": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			return func(ctx context.Context, n *node) (any, error) {
				as, err := n.eng.Accounts(ctx)
				return itemsOf(as, accountJSON), err
			}
		},
		"key create": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			expires := fs.Duration("expires", 0, "lifetime of the key, e.g. 720h (default: never expires)")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				k, plain, err := n.eng.CreateAPIKey(ctx, *account, *expires)
				if err != nil {
					return nil, err
				}
				return struct {
					ID      int64  `json:"id"`
					Account int64  `json:"account"`
					Key     string `json:"key"`
				}{k.ID, k.AccountID, plain}, nil
			}
		},
		"key import": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			key := fs.String("key", "", "the existing plain key (its prefix must be a configured one)")
			expires := fs.Duration("expires", 0, "lifetime of the key (default: never expires)")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				k, err := n.eng.ImportAPIKey(ctx, *account, *key, *expires)
				return keyJSON(k), err
			}
		},
		"key revoke": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			id := fs.Int64("id", 0, "key id")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("id", *id > 0); err != nil {
					return nil, err
				}
				k, err := n.eng.RevokeAPIKey(ctx, *id)
				return struct {
					ID      int64 `json:"id"`
					Revoked bool  `json:"revoked"`
				}{k.ID, k.Revoked()}, err
			}
		},
		"key list": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				ks, err := n.eng.APIKeys(ctx, *account)
				return itemsOf(ks, keyJSON), err
			}
		},
		"bot create": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			platform := fs.String("platform", "", "platform, e.g. telegram")
			name := fs.String("name", "", "bot name")
			config := fs.String("config", "{}", "the platform's bot config as JSON (credentials; never printed)")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				if err := need("platform", *platform != ""); err != nil {
					return nil, err
				}
				b, err := n.eng.CreateBot(ctx, push.Bot{AccountID: *account, Platform: *platform, Name: *name, Config: json.RawMessage(*config)})
				return botJSON(b), err
			}
		},
		"bot list": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				bs, err := n.eng.Bots(ctx, *account)
				return itemsOf(bs, botJSON), err
			}
		},
		"target bind": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			bot := fs.Int64("bot", 0, "bot id")
			typ := fs.String("type", "", "user or group")
			address := fs.String("address", "", "the platform's id of the user or group")
			name := fs.String("name", "", "a name for the target (default: the address)")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("bot", *bot > 0); err != nil {
					return nil, err
				}
				t, err := n.eng.BindTarget(ctx, push.Target{BotID: *bot, Type: push.TargetType(*typ), Address: *address, Name: *name})
				return targetJSON(t), err
			}
		},
		"target list": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			bot := fs.Int64("bot", 0, "bot id")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("bot", *bot > 0); err != nil {
					return nil, err
				}
				ts, err := n.eng.Targets(ctx, *bot)
				return itemsOf(ts, targetJSON), err
			}
		},
		"points set": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			account := fs.Int64("account", 0, "account id")
			balance := fs.Int64("balance", -1, "the new balance")
			return func(ctx context.Context, n *node) (any, error) {
				if err := need("account", *account > 0); err != nil {
					return nil, err
				}
				if err := need("balance", *balance >= 0); err != nil {
					return nil, err
				}
				a, err := n.eng.SetPoints(ctx, *account, *balance)
				return accountJSON(a), err
			}
		},
		"job show": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			id := fs.String("id", "", "job id")
			return func(ctx context.Context, n *node) (any, error) {
				j, err := n.eng.JobByID(ctx, *id)
				return transport.NewJobView(j), err
			}
		},
		"job resolve": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			id := fs.String("id", "", "job id")
			outcome := fs.String("outcome", "", "succeeded or failed")
			return func(ctx context.Context, n *node) (any, error) {
				j, err := n.eng.Resolve(ctx, *id, push.State(strings.TrimSpace(*outcome)))
				return transport.NewJobView(j), err
			}
		},
		"secrets status": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			return func(ctx context.Context, n *node) (any, error) {
				return secretsStatus(ctx, n, nil)
			}
		},
		"secrets rotate": func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
			return func(ctx context.Context, n *node) (any, error) {
				resealed, err := n.store.RotateSecrets(ctx)
				if err != nil {
					return nil, err
				}
				return secretsStatus(ctx, n, &resealed)
			}
		},
	}
}

// secretsOut is how the bot credentials in the database are sealed.
type secretsOut struct {
	Key      string         `json:"key"` // the id of the key that seals new credentials
	Bots     int            `json:"bots"`
	Plain    int            `json:"plain"`
	ByKey    map[string]int `json:"by_key"`
	Unopened int            `json:"unopened"`
	Resealed *int           `json:"resealed,omitempty"`
}

// secretsStatus reports how the bot credentials in the database are
// sealed; resealed, when not nil, is what a rotation just re-sealed.
func secretsStatus(ctx context.Context, n *node, resealed *int) (secretsOut, error) {
	rep, err := n.store.CheckSecrets(ctx)
	if err != nil {
		return secretsOut{}, err
	}
	return secretsOut{Key: n.store.SecretKeyID(), Bots: rep.Bots, Plain: rep.Plain, ByKey: rep.ByKey, Unopened: rep.Unopened, Resealed: resealed}, nil
}

func accountStatus(s push.AccountStatus) adminCmd {
	return func(fs *flag.FlagSet) func(context.Context, *node) (any, error) {
		id := fs.Int64("id", 0, "account id")
		return func(ctx context.Context, n *node) (any, error) {
			if err := need("id", *id > 0); err != nil {
				return nil, err
			}
			a, err := n.eng.SetAccountStatus(ctx, *id, s)
			return accountJSON(a), err
		}
	}
}
