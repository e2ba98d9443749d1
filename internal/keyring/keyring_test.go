package keyring_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/internal/keyring"
)

func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, keyring.KeySize)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func mustParse(t *testing.T, v string) *keyring.Keyring {
	t.Helper()
	k, err := keyring.Parse(v)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := mustParse(t, newKey(t))
	secret := []byte(`{"access_token":"ya29.abc","refresh_token":"1//xyz"}`)
	sealed := k.Seal(secret, "google:U1")
	if bytes.Contains(sealed, []byte("ya29")) || bytes.Contains(sealed, []byte("1//xyz")) {
		t.Fatalf("Seal(%q) = %q: the plaintext shows", secret, sealed)
	}
	if again := k.Seal(secret, "google:U1"); bytes.Equal(again, sealed) {
		t.Errorf("Seal twice gave the same bytes: the nonce repeats")
	}
	got, stale, err := k.Open(sealed, "google:U1")
	if err != nil || stale || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v, %v; want %q, false, nil", got, stale, err, secret)
	}
	if _, _, err := k.Open(sealed, "google:U2"); !errors.Is(err, keyring.ErrUnreadable) {
		t.Errorf("Open for another connection: err = %v, want ErrUnreadable", err)
	}
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	if _, _, err := k.Open(flipped, "google:U1"); !errors.Is(err, keyring.ErrUnreadable) {
		t.Errorf("Open of a changed value: err = %v, want ErrUnreadable", err)
	}
	if _, _, err := k.Open([]byte("plain"), "google:U1"); !errors.Is(err, keyring.ErrUnreadable) {
		t.Errorf("Open of a short value: err = %v, want ErrUnreadable", err)
	}
}

// A rotation: the new key first seals; the old one still opens what it
// sealed, and says it is stale; a ring without the old key cannot.
func TestRotation(t *testing.T) {
	oldKey, newKeyV := newKey(t), newKey(t)
	before := mustParse(t, oldKey)
	sealed := before.Seal([]byte("token"), "c")

	rotated := mustParse(t, newKeyV+","+oldKey)
	got, stale, err := rotated.Open(sealed, "c")
	if err != nil || !stale || string(got) != "token" {
		t.Fatalf("Open under the rotated ring = %q, %v, %v; want token, true, nil", got, stale, err)
	}
	resealed := rotated.Seal(got, "c")
	if _, stale, err := rotated.Open(resealed, "c"); err != nil || stale {
		t.Errorf("Open of the resealed value: stale %v, err %v; want false, nil", stale, err)
	}
	onlyNew := mustParse(t, newKeyV)
	if _, _, err := onlyNew.Open(sealed, "c"); !errors.Is(err, keyring.ErrUnreadable) {
		t.Errorf("Open without the old key: err = %v, want ErrUnreadable", err)
	}
	if _, _, err := onlyNew.Open(resealed, "c"); err != nil {
		t.Errorf("Open of the resealed value without the old key: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	good := newKey(t)
	short := base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!"))
	tests := []struct {
		value, want string
	}{
		{"", "the key is empty"},
		{"not base64!!", "the key is not base64"},
		{short, "the key is 16 bytes, not 32"},
		{good + ",", "key 2 of 2 is empty"},
		{good + "," + short, "key 2 of 2 is 16 bytes"},
		{good + "," + good, "key 2 of 2 appears twice"},
	}
	for _, tt := range tests {
		_, err := keyring.Parse(tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.value, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), good) || (tt.value != "" && strings.Contains(err.Error(), short)) {
			t.Errorf("Parse(%q) = %v: the error quotes a key", tt.value, err)
		}
		if !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("Parse(%q) = %v: no example of a valid key", tt.value, err)
		}
	}
	// URL alphabet and no padding are the same key.
	raw := make([]byte, 32)
	rand.Read(raw)
	a := mustParse(t, base64.StdEncoding.EncodeToString(raw))
	b := mustParse(t, base64.RawURLEncoding.EncodeToString(raw))
	if _, _, err := b.Open(a.Seal([]byte("x"), "c"), "c"); err != nil {
		t.Errorf("the URL-alphabet spelling of a key does not open what the standard one sealed: %v", err)
	}
}
