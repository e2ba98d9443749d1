package calendartest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Requests checked against Google's own description of the API. Google
// publishes every API as a discovery document, "a machine-readable
// specification for describing and consuming REST APIs"
// (https://developers.google.com/discovery/v1/reference/apis), and the Go
// client the bot calls Calendar with is generated from the one of
// calendar/v3, which ships beside it in the google.golang.org/api module
// (calendar/v3/calendar-api.json). With a Checked runner, every request
// the emulator receives under /calendar/v3/ is held to that document
// before it is answered:
//   - a method has that path and HTTP verb (else 404, as Google answers a
//     URL it does not serve);
//   - each query parameter is one of the method's or of the API's common
//     ones, of the declared type, within its enum and minimum ("Invalid
//     value for: orderBy" and the like are Google's words);
//   - the fields selector names only properties of the method's response
//     schema (Google: "Invalid field selection", reason invalidParameter,
//     location fields);
//   - a request with syncToken carries none of the parameters the
//     document's description of syncToken says "cannot be specified
//     together with nextSyncToken", nor showDeleted=false ("it is not
//     allowed to set showDeleted to False").
//
// A request that breaks it is answered 400 in Google's error format and
// recorded: CheckRequests returns it, and Checked fails the test binary.

// discovery is the part of a discovery document the checks read.
type discovery struct {
	ServicePath string                `json:"servicePath"`
	Parameters  map[string]*parameter `json:"parameters"`
	Resources   map[string]*resource  `json:"resources"`
	Schemas     map[string]*schema    `json:"schemas"`
	// methods are every resource's methods, found by path and verb.
	methods []*method
}

type resource struct {
	Methods   map[string]*method   `json:"methods"`
	Resources map[string]*resource `json:"resources"`
}

type method struct {
	ID         string                `json:"id"`
	Path       string                `json:"path"`
	HTTPMethod string                `json:"httpMethod"`
	Parameters map[string]*parameter `json:"parameters"`
	Response   *schema               `json:"response"`
	segments   []string
}

type parameter struct {
	Type        string   `json:"type"`
	Location    string   `json:"location"`
	Description string   `json:"description"`
	Enum        []string `json:"enum"`
	Minimum     string   `json:"minimum"`
	Maximum     string   `json:"maximum"`
	Repeated    bool     `json:"repeated"`
}

type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	AdditionalProperties *schema            `json:"additionalProperties"`
}

// discoveryPath is where the document lies in the google.golang.org/api
// module.
const discoveryPath = "calendar/v3/calendar-api.json"

// loadDiscovery reads the discovery document of the google.golang.org/api
// module this module builds with, found with go list as the go command
// resolves it.
func loadDiscovery() (*discovery, error) {
	out, err := exec.Command("go", "list", "-m", "-json", "google.golang.org/api").Output()
	if err != nil {
		return nil, fmt.Errorf("calendartest: go list -m google.golang.org/api: %w", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("calendartest: go list -m google.golang.org/api: no directory (run go mod download)")
	}
	raw, err := os.ReadFile(filepath.Join(mod.Dir, discoveryPath))
	if err != nil {
		return nil, fmt.Errorf("calendartest: %w", err)
	}
	return parseDiscovery(raw)
}

// parseDiscovery reads a discovery document and indexes its methods.
func parseDiscovery(raw []byte) (*discovery, error) {
	var d discovery
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("calendartest: discovery document: %w", err)
	}
	var walk func(map[string]*resource)
	walk = func(rs map[string]*resource) {
		for _, r := range rs {
			for _, m := range r.Methods {
				m.segments = strings.Split(m.Path, "/")
				d.methods = append(d.methods, m)
			}
			walk(r.Resources)
		}
	}
	walk(d.Resources)
	sort.Slice(d.methods, func(i, j int) bool { return d.methods[i].ID < d.methods[j].ID })
	if len(d.methods) == 0 || d.ServicePath == "" {
		return nil, errors.New("calendartest: discovery document without methods")
	}
	return &d, nil
}

// find returns the method of verb at path (after the service path), and
// whether the path is one of a method of another verb.
func (d *discovery) find(verb, path string) (m *method, otherVerb bool) {
	segs := strings.Split(path, "/")
	for _, c := range d.methods {
		if len(c.segments) != len(segs) {
			continue
		}
		match := true
		for i, s := range c.segments {
			if !strings.HasPrefix(s, "{") && s != segs[i] {
				match = false
				break
			}
		}
		switch {
		case match && c.HTTPMethod == verb:
			return c, false
		case match:
			otherVerb = true
		}
	}
	return nil, otherVerb
}

// violation is a request the discovery document refuses: what Google
// would answer, and what the test is told.
type violation struct {
	status   int
	reason   string
	location string
	message  string
	detail   string // for the test, beyond what Google says
}

// check holds one request to the document, or returns what is wrong.
func (d *discovery) check(r *http.Request) *violation {
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), "/"+d.ServicePath)
	if !ok {
		return nil // not the API: the token endpoint and the like
	}
	m, otherVerb := d.find(r.Method, path)
	if m == nil {
		if otherVerb {
			return &violation{http.StatusMethodNotAllowed, "httpMethodNotAllowed", "", fmt.Sprintf("%s is not a method of %s", r.Method, path), ""}
		}
		return &violation{http.StatusNotFound, "notFound", "", "Not Found: no method of calendar/v3 at " + path, ""}
	}
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := d.checkParameter(m, name, q[name]); v != nil {
			return v
		}
	}
	if f := q.Get("fields"); f != "" {
		if v := d.checkFields(m, f); v != nil {
			return v
		}
	}
	return checkSync(m, q)
}

// checkParameter checks one query parameter of m.
func (d *discovery) checkParameter(m *method, name string, values []string) *violation {
	p := m.Parameters[name]
	if p == nil || p.Location == "path" {
		p = d.Parameters[name]
	}
	if p == nil {
		return &violation{http.StatusBadRequest, "badRequest", name,
			fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot bind query parameter. Field %q could not be found in request message.", name, name),
			m.ID + " defines no such parameter"}
	}
	if len(values) > 1 && !p.Repeated {
		return &violation{http.StatusBadRequest, "invalidParameter", name, fmt.Sprintf("%s takes one %s, got %d", m.ID, name, len(values)), ""}
	}
	for _, v := range values {
		if !p.accepts(v) {
			return &violation{http.StatusBadRequest, "invalidParameter", name, "Invalid value for: " + name, ""}
		}
	}
	return nil
}

// accepts reports whether v is a value of p's type, enum and bounds.
func (p *parameter) accepts(v string) bool {
	if len(p.Enum) > 0 {
		found := false
		for _, e := range p.Enum {
			found = found || e == v
		}
		if !found {
			return false
		}
	}
	switch p.Type {
	case "boolean":
		return v == "true" || v == "false"
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		if lo, err := strconv.ParseInt(p.Minimum, 10, 64); err == nil && n < lo {
			return false
		}
		if hi, err := strconv.ParseInt(p.Maximum, 10, 64); err == nil && n > hi {
			return false
		}
	}
	return true
}

// checkFields checks that a fields selector names properties of m's
// response schema.
func (d *discovery) checkFields(m *method, fields string) *violation {
	bad := func(why string) *violation {
		return &violation{http.StatusBadRequest, "invalidParameter", "fields", "Invalid field selection " + why, ""}
	}
	mask, err := parseFields(fields)
	if err != nil {
		return bad(fields)
	}
	if m.Response == nil {
		return bad(fields + ": " + m.ID + " has no response body")
	}
	if name := d.unknownField(m.Response, mask, ""); name != "" {
		return bad(name)
	}
	return nil
}

// unknownField returns the first name of mask that s does not have, as a
// path from the top, or "".
func (d *discovery) unknownField(s *schema, mask fieldMask, prefix string) string {
	s = d.resolve(s)
	for s.Type == "array" && s.Items != nil {
		s = d.resolve(s.Items)
	}
	names := make([]string, 0, len(mask))
	for name := range mask {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var sub *schema
		switch {
		case name == "*":
			continue
		case s.Properties[name] != nil:
			sub = s.Properties[name]
		case s.AdditionalProperties != nil:
			sub = s.AdditionalProperties // a map's keys are the caller's
		default:
			return prefix + name
		}
		if mask[name] != nil {
			if bad := d.unknownField(sub, mask[name], prefix+name+"/"); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// resolve follows a schema's $ref.
func (d *discovery) resolve(s *schema) *schema {
	for s.Ref != "" && d.Schemas[s.Ref] != nil {
		s = d.Schemas[s.Ref]
	}
	return s
}

// checkSync refuses what the description of m's syncToken parameter says
// cannot go with it.
func checkSync(m *method, q url.Values) *violation {
	p := m.Parameters["syncToken"]
	if p == nil || q.Get("syncToken") == "" {
		return nil
	}
	for _, name := range excludedBySync(p.Description) {
		if q.Has(name) {
			return &violation{http.StatusBadRequest, "invalid", name, SyncRestrictionsMessage,
				fmt.Sprintf("%s: the discovery document says %s %q", name, m.ID, "cannot be specified together with nextSyncToken")}
		}
	}
	if q.Get("showDeleted") == "false" && strings.Contains(p.Description, "not allowed to set showDeleted to False") {
		return &violation{http.StatusBadRequest, "invalid", "showDeleted", SyncRestrictionsMessage,
			fmt.Sprintf("showDeleted=false: the discovery document says %s %q", m.ID, "it is not allowed to set showDeleted to False")}
	}
	return nil
}

// excludedBySync reads the list that follows "These are:" in the
// description of syncToken: one "- name" a line.
func excludedBySync(desc string) []string {
	_, list, ok := strings.Cut(desc, "These are:")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			if len(names) > 0 {
				break
			}
			continue
		}
		if f := strings.Fields(rest); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// Runner is what a test binary's *testing.M provides.
type Runner interface{ Run() int }

type runnerFunc func() int

func (f runnerFunc) Run() int { return f() }

// checking holds the discovery document and the Servers made while a
// Checked runner runs.
var checking struct {
	sync.Mutex
	spec    *discovery
	servers []*Server
}

// register gives s the document to check requests against, when a
// Checked runner runs.
func register(s *Server) {
	checking.Lock()
	defer checking.Unlock()
	if checking.spec != nil {
		s.spec = checking.spec
		checking.servers = append(checking.servers, s)
	}
}

// Checked returns a Runner that runs m with every Server made meanwhile
// checking each request against Google's discovery document of
// calendar/v3 (answering one it refuses 400, as Google does), and then
// fails the run (exit status 1), printing each such request, when there
// was any not taken by CheckRequests. It fails at once when the document
// cannot be read. A test binary whose tests use a Server runs through it:
//
//	func TestMain(m *testing.M) { os.Exit(calendartest.Checked(m).Run()) }
func Checked(m Runner) Runner {
	return runnerFunc(func() int {
		spec, err := loadDiscovery()
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		checking.Lock()
		checking.spec = spec
		checking.Unlock()
		code := m.Run()
		checking.Lock()
		servers := checking.servers
		checking.spec, checking.servers = nil, nil
		checking.Unlock()
		var errs []error
		for _, s := range servers {
			if err := s.CheckRequests(); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			fmt.Fprintln(os.Stderr, "FAIL: Calendar requests that Google's discovery document refuses:")
			fmt.Fprintln(os.Stderr, errors.Join(errs...))
			return 1
		}
		return code
	})
}

// refused is one request the document refused.
type refused struct {
	request string
	v       violation
}

// CheckRequests returns an error naming every request s refused against
// Google's discovery document since the last call, or nil; without a
// Checked runner, s checks nothing.
func (s *Server) CheckRequests() error {
	s.mu.Lock()
	got := s.refused
	s.refused = nil
	s.mu.Unlock()
	var lines []string
	for _, r := range got {
		line := fmt.Sprintf("%s: %d %s: %s", r.request, r.v.status, r.v.reason, r.v.message)
		if r.v.detail != "" {
			line += " (" + r.v.detail + ")"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// specCheck wraps the server's handler: a request the discovery document
// refuses is recorded and answered as Google answers it.
func (s *Server) specCheck(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.spec == nil {
			h.ServeHTTP(w, r)
			return
		}
		v := s.spec.check(r)
		if v == nil {
			h.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		s.refused = append(s.refused, refused{request: r.Method + " " + r.URL.RequestURI(), v: *v})
		s.mu.Unlock()
		writeError(w, v.status, "global", v.reason, v.message)
	})
}
