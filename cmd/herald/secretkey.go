package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/heraldpush/herald/internal/node"
	"github.com/heraldpush/herald/storage"
)

// The secret key that seals bot credentials in the database comes from
// HERALD_SECRET_KEY, or from a key file. Older keys, kept while rotating,
// come from HERALD_OLD_SECRET_KEYS and --old-secret-key-files.
const (
	envSecretKey     = "HERALD_SECRET_KEY"
	envOldSecretKeys = "HERALD_OLD_SECRET_KEYS"
)

// envOnly lists the environment variables that have no flag (a secret on
// the command line would show in the process list), with their meaning.
func envOnly() [][2]string {
	return [][2]string{
		{envSecretKey, "the key that seals bot credentials in the database: 32 bytes as base64 or hex (openssl rand -base64 32); overrides --secret-key-file; give the same key to every node of a PostgreSQL installation"},
		{envOldSecretKeys, "comma-separated earlier secret keys, kept while rotating (see SECURITY.md); values sealed with them still open"},
	}
}

// defaultKeyFile is where the key file of a SQLite database lives when no
// --secret-key-file is given: beside the database, e.g. herald.db.key.
func defaultKeyFile(db string) string {
	if path := sqliteFile(db); path != "" {
		return path + ".key"
	}
	return ""
}

// sealer builds the Sealer of the node: the primary key from the
// environment or the key file (created with mode 0600 on first start), and
// the older keys.
func (e *engineFlags) sealer(log *slog.Logger) (*storage.Sealer, error) {
	primary, err := e.primaryKey(log)
	if err != nil {
		return nil, err
	}
	var older [][]byte
	for _, s := range splitList(os.Getenv(envOldSecretKeys)) {
		k, err := storage.ParseSecretKey(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envOldSecretKeys, err)
		}
		older = append(older, k)
	}
	for _, path := range splitList(e.oldKeyFiles) {
		k, err := readKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("--old-secret-key-files %s: %w", path, err)
		}
		older = append(older, k)
	}
	return storage.NewSealer(primary, older...)
}

func (e *engineFlags) primaryKey(log *slog.Logger) ([]byte, error) {
	if v, ok := os.LookupEnv(envSecretKey); ok {
		overrides := ""
		if e.keyFile != "" {
			overrides = " (it is set, so --secret-key-file " + e.keyFile + " is not read)"
			log.Warn(envSecretKey+" is set: it overrides --secret-key-file", "file", e.keyFile)
		}
		k, err := storage.ParseSecretKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", envSecretKey, overrides, err)
		}
		return k, nil
	}
	path := e.keyFile
	if path == "" {
		path = defaultKeyFile(e.db)
	}
	switch {
	case path == "" && e.db == ":memory:":
		return storage.NewSecretKey(), nil // the database dies with the process
	case path == "":
		return nil, fmt.Errorf("a PostgreSQL database needs the secret key that seals bot credentials: set %s (the same on every node) or --secret-key-file to a file every node reads", envSecretKey)
	}
	// Errors name the setting the user gave: --secret-key-file, or --db
	// beside which the default file lives.
	origin := "--secret-key-file " + path
	if e.keyFile == "" {
		origin = "the secret key file " + path + " (beside " + flagOrigin("db", e.db) + "; --secret-key-file names another)"
	}
	k, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", origin, err)
		}
		return k, nil
	}
	k = storage.NewSecretKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process created it meanwhile
		if k, err = readKeyFile(path); err != nil {
			return nil, fmt.Errorf("%s: %w", origin, err)
		}
		return k, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: create it: %w", origin, err)
	}
	if _, err := f.WriteString(storage.EncodeSecretKey(k) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: write it: %w", origin, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("%s: write it: %w", origin, err)
	}
	log.Info("created the secret key that seals bot credentials; back it up with the database", "file", path, "key_id", storage.KeyID(k))
	return k, nil
}

// readKeyFile reads a key file, refusing one that others can read.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the file can be read by other users (mode %v): chmod 600 it", info.Mode().Perm())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	k, err := storage.ParseSecretKey(string(data))
	if err != nil {
		return nil, err
	}
	return k, nil
}

// checkSecrets refuses to run a node whose key cannot open the bot
// credentials in the database, and warns about credentials stored
// unsealed.
func checkSecrets(ctx context.Context, n *node.Node, log *slog.Logger) error {
	rep, err := n.Store.CheckSecrets(ctx)
	if err != nil {
		return err
	}
	if rep.Unopened > 0 {
		return fmt.Errorf("%d bot configs cannot be opened with the configured secret key: %w", rep.Unopened, rep.FirstFail)
	}
	if rep.Plain > 0 {
		log.Warn("bot credentials stored before encryption was on are unsealed: run herald admin secrets rotate", "bots", rep.Plain)
	}
	return nil
}
