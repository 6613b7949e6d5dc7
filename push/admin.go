package push

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// maxName bounds the names of accounts, bots and targets.
const maxName = 200

func validateName(what, name string) error {
	if strings.TrimSpace(name) == "" {
		return Errorf(Invalid, "invalid_name", "the %s name is empty: give a name", what)
	}
	if utf8.RuneCountInString(name) > maxName || !utf8.ValidString(name) {
		return Errorf(Invalid, "invalid_name", "the %s name must be valid UTF-8 of at most %d characters", what, maxName)
	}
	return nil
}

// CreateAccount creates an active account with the initial points balance.
func (e *Engine) CreateAccount(ctx context.Context, name string) (Account, error) {
	if err := validateName("account", name); err != nil {
		return Account{}, err
	}
	a := Account{Name: name, Points: e.points.Initial, Status: AccountActive, CreatedAt: e.clock.Now()}
	if err := e.store.CreateAccount(ctx, &a); err != nil {
		return Account{}, err
	}
	return a, nil
}

// Account returns an account.
func (e *Engine) Account(ctx context.Context, id int64) (Account, error) {
	return e.store.Account(ctx, id)
}

// Accounts lists all accounts.
func (e *Engine) Accounts(ctx context.Context) ([]Account, error) {
	return e.store.Accounts(ctx)
}

// SetAccountStatus suspends or activates an account. A suspended account's
// keys are refused with Forbidden.
func (e *Engine) SetAccountStatus(ctx context.Context, id int64, s AccountStatus) (Account, error) {
	if s != AccountActive && s != AccountSuspended {
		return Account{}, Errorf(Invalid, "invalid_status", "account status %q is not known: use active or suspended", s)
	}
	err := e.store.SetAccountStatus(ctx, id, s)
	e.forgetAuth()
	if err != nil {
		return Account{}, err
	}
	return e.store.Account(ctx, id)
}

// SetPoints sets an account's balance; the difference is recorded in the
// points ledger.
func (e *Engine) SetPoints(ctx context.Context, id int64, balance int64) (Account, error) {
	if balance < 0 {
		return Account{}, Errorf(Invalid, "invalid_balance", "a balance cannot be negative (got %d)", balance)
	}
	if err := e.store.SetPoints(ctx, id, balance, e.clock.Now()); err != nil {
		return Account{}, err
	}
	return e.store.Account(ctx, id)
}

// Ledger returns an account's points movements, oldest first.
func (e *Engine) Ledger(ctx context.Context, accountID int64) ([]LedgerEntry, error) {
	return e.store.Ledger(ctx, accountID)
}

// CreateAPIKey makes a new key for an account and returns it with the
// plain key, which is not stored and cannot be shown again. A ttl of zero
// makes a key that does not expire.
func (e *Engine) CreateAPIKey(ctx context.Context, accountID int64, ttl time.Duration) (APIKey, string, error) {
	plain := generateKey(e.keyPrefix)
	k, err := e.storeKey(ctx, accountID, plain, ttl)
	return k, plain, err
}

// ImportAPIKey stores an existing plain key (for example one issued by an
// earlier system under a legacy prefix) for an account.
func (e *Engine) ImportAPIKey(ctx context.Context, accountID int64, plain string, ttl time.Duration) (APIKey, error) {
	prefix, ok := splitKey(plain)
	if !ok || !e.prefixes[prefix] {
		return APIKey{}, Errorf(Invalid, "invalid_api_key", "the key must look like <prefix>_<secret> with a configured prefix (%s)", strings.Join(e.prefixList(), ", "))
	}
	if len(plain)-len(prefix)-1 < 16 {
		return APIKey{}, Errorf(Invalid, "weak_api_key", "the key's secret part is shorter than 16 characters")
	}
	return e.storeKey(ctx, accountID, plain, ttl)
}

func (e *Engine) storeKey(ctx context.Context, accountID int64, plain string, ttl time.Duration) (APIKey, error) {
	if ttl < 0 {
		return APIKey{}, Errorf(Invalid, "invalid_expiry", "a key's lifetime cannot be negative")
	}
	if _, err := e.store.Account(ctx, accountID); err != nil {
		return APIKey{}, err
	}
	prefix, _ := splitKey(plain)
	now := e.clock.Now()
	k := APIKey{AccountID: accountID, Prefix: prefix, Hash: HashKey(plain), Hint: keyHint(plain), CreatedAt: now}
	if ttl > 0 {
		k.ExpiresAt = now.Add(ttl)
	}
	if err := e.store.CreateAPIKey(ctx, &k); err != nil {
		return APIKey{}, err
	}
	return k, nil
}

func (e *Engine) prefixList() []string {
	out := []string{e.keyPrefix}
	for p := range e.prefixes {
		if p != e.keyPrefix {
			out = append(out, p)
		}
	}
	return out
}

// APIKeys lists an account's keys (hashes only).
func (e *Engine) APIKeys(ctx context.Context, accountID int64) ([]APIKey, error) {
	if _, err := e.store.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return e.store.APIKeys(ctx, accountID)
}

// RevokeAPIKey revokes a key at once. Revoking a revoked key changes
// nothing.
func (e *Engine) RevokeAPIKey(ctx context.Context, id int64) (APIKey, error) {
	k, err := e.store.APIKey(ctx, id)
	if err != nil {
		return APIKey{}, err
	}
	if !k.Revoked() {
		err := e.store.RevokeAPIKey(ctx, id, e.clock.Now())
		e.forgetAuth()
		if err != nil {
			return APIKey{}, err
		}
	}
	return e.store.APIKey(ctx, id)
}

// forgetAuth ends every remembered authentication of this engine at once,
// after a change to a key or an account (the store's auth epoch tells
// other processes).
func (e *Engine) forgetAuth() {
	if e.auth != nil {
		e.auth.forget()
	}
}

// CreateBot creates a bot after its platform has validated the config.
func (e *Engine) CreateBot(ctx context.Context, b Bot) (Bot, error) {
	if err := validateName("bot", b.Name); err != nil {
		return Bot{}, err
	}
	p, ok := e.platforms[b.Platform]
	if !ok {
		return Bot{}, Errorf(Invalid, "unknown_platform", "platform %q is not known: use one of %s", b.Platform, strings.Join(e.PlatformNames(), ", "))
	}
	if len(b.Config) == 0 {
		b.Config = json.RawMessage("{}")
	}
	if !json.Valid(b.Config) {
		return Bot{}, Errorf(Invalid, "invalid_config", "the bot config is not valid JSON")
	}
	if err := p.ValidateConfig(b.Config); err != nil {
		if IsKind(err, Invalid) {
			return Bot{}, err
		}
		return Bot{}, Errorf(Invalid, "invalid_config", "%s bot config: %v", b.Platform, err)
	}
	if _, err := e.store.Account(ctx, b.AccountID); err != nil {
		return Bot{}, err
	}
	b.ID = 0
	b.CreatedAt = e.clock.Now()
	if err := e.store.CreateBot(ctx, &b); err != nil {
		return Bot{}, err
	}
	return b, nil
}

// Bot returns a bot.
func (e *Engine) Bot(ctx context.Context, id int64) (Bot, error) { return e.store.Bot(ctx, id) }

// Bots lists an account's bots.
func (e *Engine) Bots(ctx context.Context, accountID int64) ([]Bot, error) {
	if _, err := e.store.Account(ctx, accountID); err != nil {
		return nil, err
	}
	return e.store.Bots(ctx, accountID)
}

// BindTarget binds a target to a bot after the bot's platform has checked
// it. Binding the same address and type twice is a Conflict.
func (e *Engine) BindTarget(ctx context.Context, t Target) (Target, error) {
	b, err := e.store.Bot(ctx, t.BotID)
	if err != nil {
		return Target{}, err
	}
	p, ok := e.platforms[b.Platform]
	if !ok {
		return Target{}, Errorf(Invalid, "platform_unavailable", "bot %d uses the platform %q, which this server does not run", b.ID, b.Platform)
	}
	info := p.Info()
	if !info.Targets {
		return Target{}, Errorf(Invalid, "platform_has_no_targets", "bot %d is on %s, which has no targets: send to the bot without a target", b.ID, b.Platform)
	}
	if !t.Type.Valid() {
		return Target{}, Errorf(Invalid, "invalid_target_type", "target type %q is not known: use user or group", t.Type)
	}
	supported := false
	for _, tt := range info.TargetTypes {
		supported = supported || tt == t.Type
	}
	if !supported {
		return Target{}, Errorf(Invalid, "unsupported_target_type", "%s bots cannot send to a %s target: use %s", b.Platform, t.Type, validTargetTypes(info.TargetTypes))
	}
	t.Address = strings.TrimSpace(t.Address)
	if t.Address == "" || len(t.Address) > 512 {
		return Target{}, Errorf(Invalid, "invalid_address", "the target address must be the platform's id of the user or group (1 to 512 bytes)")
	}
	if t.Name == "" {
		t.Name = t.Address
	} else if err := validateName("target", t.Name); err != nil {
		return Target{}, err
	}
	if err := p.ValidateTarget(b.Config, t); err != nil {
		if IsKind(err, Invalid) {
			return Target{}, err
		}
		return Target{}, Errorf(Invalid, "invalid_target", "%s target: %v", b.Platform, err)
	}
	t.ID = 0
	t.CreatedAt = e.clock.Now()
	if err := e.store.CreateTarget(ctx, &t); err != nil {
		if ReasonOf(err) == ReasonDuplicate {
			return Target{}, Errorf(Conflict, "target_exists", "bot %d already has the %s target %q bound", b.ID, t.Type, t.Address)
		}
		return Target{}, err
	}
	return t, nil
}

// Target returns a target.
func (e *Engine) Target(ctx context.Context, id int64) (Target, error) {
	return e.store.Target(ctx, id)
}

// Targets lists a bot's targets.
func (e *Engine) Targets(ctx context.Context, botID int64) ([]Target, error) {
	if _, err := e.store.Bot(ctx, botID); err != nil {
		return nil, err
	}
	return e.store.Targets(ctx, botID)
}

// PlatformNames lists the platforms this engine can send on.
func (e *Engine) PlatformNames() []string {
	names := make([]string, 0, len(e.platforms))
	for n := range e.platforms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Platform returns a platform by name.
func (e *Engine) Platform(name string) (Platform, bool) {
	p, ok := e.platforms[name]
	return p, ok
}
