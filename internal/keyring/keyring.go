// Package keyring holds the keys of TOKEN_ENCRYPTION_KEY and seals and
// opens the tokens people's connections keep at rest, with AES-256-GCM
// from the standard library. It is the one owner of those keys: stores
// keep what Seal returns, as bytes, and never see a key.
//
// Keys rotate: TOKEN_ENCRYPTION_KEY holds one or more keys, comma
// separated; the first seals, any opens, and Open says when what it
// opened was sealed under another key than the first, so that the caller
// seals it again under the first.
package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of each key: AES-256.
const KeySize = 32

// Example is a valid TOKEN_ENCRYPTION_KEY, for error messages: how to make
// one, not one to use.
const Example = "TOKEN_ENCRYPTION_KEY=$(openssl rand -base64 32)"

// version starts every sealed value: the layout below.
const version = 1

// Layout of a sealed value: version (1 byte), the key's ID (4 bytes),
// the GCM nonce (12 bytes), then the ciphertext and its 16-byte tag.
const (
	idSize    = 4
	nonceSize = 12
	overhead  = 1 + idSize + nonceSize + 16
)

// ErrUnreadable is what Open's error matches when no key of the ring opens
// a value: it was sealed under a key no longer in TOKEN_ENCRYPTION_KEY, or
// for another context, or it was changed.
var ErrUnreadable = errors.New("sealed under none of the keys of TOKEN_ENCRYPTION_KEY")

// Keyring is a set of keys, the first of which seals. It is safe for
// concurrent use.
type Keyring struct {
	keys []key
}

type key struct {
	id   [idSize]byte // the first bytes of the key's SHA-256: which key sealed, without saying anything of it
	aead cipher.AEAD
}

// Parse reads TOKEN_ENCRYPTION_KEY: base64 keys of KeySize bytes each,
// comma-separated (standard or URL alphabet, padded or not). Its errors say
// which key is wrong and how, never quoting one.
func Parse(value string) (*Keyring, error) {
	parts := strings.Split(value, ",")
	k := &Keyring{}
	seen := map[[idSize]byte]bool{}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		which := "the key"
		if len(parts) > 1 {
			which = fmt.Sprintf("key %d of %d", i+1, len(parts))
		}
		if part == "" {
			return nil, fmt.Errorf("%s is empty: each key is 32 random bytes in base64, e.g. %s", which, Example)
		}
		raw, err := decode(part)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s is not base64: each key is 32 random bytes in base64, e.g. %s", which, Example)
		case len(raw) != KeySize:
			return nil, fmt.Errorf("%s is %d bytes, not %d: each key is 32 random bytes in base64, e.g. %s", which, len(raw), KeySize, Example)
		}
		kk, err := newKey(raw)
		if err != nil {
			return nil, err
		}
		if seen[kk.id] {
			return nil, fmt.Errorf("%s appears twice: list each key once, the new one first, e.g. TOKEN_ENCRYPTION_KEY=<new>,<old> with <new> made by openssl rand -base64 32", which)
		}
		seen[kk.id] = true
		k.keys = append(k.keys, kk)
	}
	return k, nil
}

func decode(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

func newKey(raw []byte) (key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, fmt.Errorf("keyring: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, fmt.Errorf("keyring: %w", err)
	}
	sum := sha256.Sum256(raw)
	var k key
	copy(k.id[:], sum[:idSize])
	k.aead = aead
	return k, nil
}

// Keys returns how many keys the ring holds.
func (k *Keyring) Keys() int { return len(k.keys) }

// Seal encrypts plaintext under the first key. context is authenticated
// but not stored: Open must be given the same, so that a value sealed for
// one connection cannot be moved to another's row and opened there.
func (k *Keyring) Seal(plaintext []byte, context string) []byte {
	first := k.keys[0]
	out := make([]byte, 1+idSize+nonceSize, overhead+len(plaintext))
	out[0] = version
	copy(out[1:], first.id[:])
	nonce := out[1+idSize:]
	if _, err := rand.Read(nonce); err != nil {
		panic("keyring: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return first.aead.Seal(out, nonce, plaintext, []byte(context))
}

// Open decrypts what Seal returned for context. stale reports that it was
// sealed under another key than the first: seal it again. An error matches
// ErrUnreadable when no key opens it.
func (k *Keyring) Open(sealed []byte, context string) (plaintext []byte, stale bool, err error) {
	if len(sealed) < overhead || sealed[0] != version {
		return nil, false, fmt.Errorf("keyring: not a sealed value: %w", ErrUnreadable)
	}
	id, nonce, body := sealed[1:1+idSize], sealed[1+idSize:1+idSize+nonceSize], sealed[1+idSize+nonceSize:]
	for i, kk := range k.keys {
		if !bytes.Equal(kk.id[:], id) {
			continue
		}
		p, err := kk.aead.Open(nil, nonce, body, []byte(context))
		if err != nil {
			return nil, false, fmt.Errorf("keyring: %w", ErrUnreadable)
		}
		return p, i > 0, nil
	}
	return nil, false, fmt.Errorf("keyring: %w", ErrUnreadable)
}
