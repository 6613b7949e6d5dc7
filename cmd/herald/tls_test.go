package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
)

// TestServeHTTPS serves the API over TLS with a certificate from files.
func TestServeHTTPS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := writeSelfSigned(t, certFile, keyFile)
	db := filepath.Join(dir, "h.db")
	p := testkit.StartServe(t, heraldBin, []string{"HERALD_DB=" + db}, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("serve listens on %s, want https", p.URL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	resp, err := client.Get(strings.TrimSuffix(p.URL, "/api") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("GET /healthz over TLS: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	// Plain HTTP on the TLS port gets no API.
	plain, err := http.Get("http://" + strings.TrimPrefix(strings.TrimSuffix(p.URL, "/api"), "https://") + "/healthz")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Fatal("plain HTTP was served on the TLS listener")
		}
	}
	var out strings.Builder
	if code := run(t.Context(), []string{"serve", "--db", db, "--tls-cert", certFile}, &out, &out); code == 0 || !strings.Contains(out.String(), "go together") {
		t.Fatalf("--tls-cert alone: exit %d, %q", code, out.String())
	}
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key, and
// returns a pool that trusts it.
func writeSelfSigned(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "herald test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}
