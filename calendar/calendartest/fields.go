package calendartest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// fieldMask is a parsed partial-response selector, the fields parameter
// every Google API takes: the names it keeps at one level, each with the
// mask of what it keeps below (nil: everything).
type fieldMask map[string]fieldMask

// parseFields reads a selector as Google documents it: names separated by
// commas, a/b for b inside a, a(b,c) for b and c inside a, and * for
// every name at a level.
func parseFields(s string) (fieldMask, error) {
	p := &maskParser{s: s}
	m, err := p.list()
	if err == nil && p.i < len(p.s) {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return nil, fmt.Errorf("invalid field selection %s: %w", s, err)
	}
	return m, nil
}

type maskParser struct {
	s string
	i int
}

// list reads item (',' item)*.
func (p *maskParser) list() (fieldMask, error) {
	m := fieldMask{}
	for {
		if err := p.item(m); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return m, nil
		}
		p.i++
	}
}

// item reads name ('/' name)* ['(' list ')'] into m.
func (p *maskParser) item(m fieldMask) error {
	name := p.name()
	if name == "" {
		return fmt.Errorf("missing a name at %d", p.i)
	}
	for p.i < len(p.s) && p.s[p.i] == '/' {
		p.i++
		sub := m[name]
		if sub == nil {
			sub = fieldMask{}
			m[name] = sub
		}
		m, name = sub, p.name()
		if name == "" {
			return fmt.Errorf("missing a name at %d", p.i)
		}
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub, err := p.list()
		if err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return fmt.Errorf("missing ) at %d", p.i)
		}
		p.i++
		m[name] = merge(m[name], sub)
		return nil
	}
	if _, ok := m[name]; !ok {
		m[name] = nil
	}
	return nil
}

func (p *maskParser) name() string {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",/()", rune(p.s[p.i])) {
		p.i++
	}
	return strings.TrimSpace(p.s[start:p.i])
}

func merge(a, b fieldMask) fieldMask {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = merge(a[k], v)
	}
	return a
}

// checkedFields returns the mask selector s parses to, checked against t
// (see check). A mask is only read once made, so each selector is parsed
// and checked once: a client sends the same few on every request.
func checkedFields(s string, t reflect.Type) (fieldMask, error) {
	type key struct {
		s string
		t reflect.Type
	}
	type checked struct {
		m   fieldMask
		err error
	}
	if c, ok := masks.Load(key{s, t}); ok {
		return c.(checked).m, c.(checked).err
	}
	m, err := parseFields(s)
	if err == nil {
		err = m.check(t)
	}
	masks.Store(key{s, t}, checked{m, err})
	return m, err
}

// masks are the selectors checkedFields has seen.
var masks sync.Map

// check refuses names that t (a struct, read through its JSON names) does
// not have, as Google refuses a selection of unknown fields.
func (m fieldMask) check(t reflect.Type) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	for name, sub := range m {
		var ft reflect.Type
		switch {
		case name == "*" || t.Kind() == reflect.Map:
			ft = t
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			}
		case t.Kind() == reflect.Struct:
			ft = jsonField(t, name)
		}
		if ft == nil {
			return fmt.Errorf("invalid field selection %s", name)
		}
		if sub != nil && name != "*" {
			if err := sub.check(ft); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonField returns the type of t's field whose JSON name is name, or nil.
func jsonField(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f.Type
		}
	}
	return nil
}

// apply keeps what m selects of v, a JSON value as encoding/json decodes
// it into an any.
func (m fieldMask) apply(v any) any {
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			v[i] = m.apply(e)
		}
		return v
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			sub, ok := m[k]
			if !ok {
				sub, ok = m["*"]
			}
			if !ok {
				continue
			}
			if sub != nil {
				e = sub.apply(e)
			}
			out[k] = e
		}
		return out
	}
	return v
}

// encodeFields returns the JSON of v with only what m selects.
func encodeFields(v any, m fieldMask) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || m == nil {
		return b, err
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	return json.Marshal(m.apply(tree))
}
