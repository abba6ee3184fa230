// Package registry holds the add-on registry: one YAML file per add-on, every lifecycle claim
// with a citation. Validate refuses an uncited or malformed entry naming its file and field;
// tools/genregistry compiles the entries into the built-in bundle's data.
package registry

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Files are the shipped entries.
//
//go:embed *.yaml
var Files embed.FS

// Support statuses.
const (
	StatusSupported = "supported"
	StatusRetired   = "retired"
	StatusUnknown   = "unknown"
)

// Unknown marks a date no citation backs; None marks a release line still supported; Ended
// marks a line whose support ended on a date the citation does not give.
const (
	Unknown = "unknown"
	None    = "none"
	Ended   = "ended"
)

// Entry is one add-on.
type Entry struct {
	ID             string   `yaml:"id" json:"id"`
	Name           string   `yaml:"name" json:"name"`
	Match          Match    `yaml:"match" json:"match"`
	Supersedes     []string `yaml:"supersedes" json:"supersedes,omitempty"`
	Support        Support  `yaml:"support" json:"support"`
	Lines          []Line   `yaml:"lines" json:"lines,omitempty"`
	Compat         []Compat `yaml:"compat" json:"compat,omitempty"`
	Recommendation string   `yaml:"recommendation" json:"recommendation,omitempty"`
}

// Match says what identifies the add-on. Images are repositories with an optional
// ":tag-glob", matched by path without the registry: an image matches when the matcher's
// path is a run of whole segments of its path, so docker.io/istio/pilot matches the mirror
// harbor.corp/mirror/istio/pilot but not docker.io/istio/examples-bookinfo-details-v1. A
// bare organisation (docker.io/istio) would match every image the organisation publishes,
// its samples included: list the product's repositories. Charts are chart names; labels are
// app.kubernetes.io/name values; ingressControllers are IngressClass spec.controller values;
// runtimes are node container runtime names (the part of containerRuntimeVersion before "://").
type Match struct {
	Images             []string `yaml:"images" json:"images,omitempty"`
	Charts             []string `yaml:"charts" json:"charts,omitempty"`
	Labels             []string `yaml:"labels" json:"labels,omitempty"`
	IngressControllers []string `yaml:"ingressControllers" json:"ingressControllers,omitempty"`
	Runtimes           []string `yaml:"runtimes" json:"runtimes,omitempty"`
}

// Support is the product's status and end of life.
type Support struct {
	Status            string   `yaml:"status" json:"status"`
	EOL               string   `yaml:"eol" json:"eol"`
	ExtendedEOL       string   `yaml:"extendedEol" json:"extendedEol,omitempty"`
	ExtendedCondition string   `yaml:"extendedCondition" json:"extendedCondition,omitempty"`
	Citations         []string `yaml:"citations" json:"citations"`
}

// Line is a release line ("3.21") with its end of life and, where known, the Kubernetes
// minors it supports.
type Line struct {
	Line       string    `yaml:"line" json:"line"`
	EOL        string    `yaml:"eol" json:"eol"`
	Kubernetes *K8sRange `yaml:"kubernetes" json:"kubernetes,omitempty"`
	Citations  []string  `yaml:"citations" json:"citations"`
}

// Compat is a version interval [From, Before) of the add-on and the Kubernetes minors it
// supports.
type Compat struct {
	Versions   Interval `yaml:"versions" json:"versions"`
	Kubernetes K8sRange `yaml:"kubernetes" json:"kubernetes"`
	Citations  []string `yaml:"citations" json:"citations"`
}

// Interval is a half-open semver interval; an empty Before is unbounded.
type Interval struct {
	From   string `yaml:"from" json:"from"`
	Before string `yaml:"before" json:"before,omitempty"`
}

// K8sRange is an inclusive range of Kubernetes minors; either end may be open.
type K8sRange struct {
	Min string `yaml:"min" json:"min,omitempty"`
	Max string `yaml:"max" json:"max,omitempty"`
}

var (
	idRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	lineRE   = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	minorRE  = regexp.MustCompile(`^1\.[0-9]+$`)
	semverRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
)

// Load reads and validates every *.yaml entry of fsys.
func Load(fsys fs.FS) (map[string]Entry, error) {
	entries, problems := loadAll(fsys, "*.yaml", func(e *Entry) (string, []string) { return e.ID, validate(*e) })
	problems = append(problems, crossCheck(entries)...)
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("invalid add-on registry:\n  %s", strings.Join(problems, "\n  "))
	}
	return entries, nil
}

// loadAll decodes every file of fsys matching pattern strictly (an unknown field is an
// error), checks that its id is its file name and validates it, keyed by id. Each problem
// names its file.
func loadAll[T any](fsys fs.FS, pattern string, check func(*T) (id string, problems []string)) (map[string]T, []string) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, []string{err.Error()}
	}
	out := map[string]T{}
	var problems []string
	for _, name := range names {
		v, id, err := loadOne(fsys, name, check)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[id] = v
	}
	return out, problems
}

func loadOne[T any](fsys fs.FS, name string, check func(*T) (string, []string)) (T, string, error) {
	var v T
	if err := decodeStrict(fsys, name, &v); err != nil {
		return v, "", err
	}
	id, problems := check(&v)
	if want := strings.TrimSuffix(path.Base(name), ".yaml"); id != want {
		return v, "", fmt.Errorf("%s: id: %q must match the file name %q", name, id, want)
	}
	if len(problems) > 0 {
		return v, "", fmt.Errorf("%s: %s", name, strings.Join(problems, "; "))
	}
	return v, id, nil
}

// decodeStrict decodes the YAML file name of fsys into v, refusing a field v does not have:
// a misspelt key would otherwise drop a cited claim without a word.
func decodeStrict(fsys fs.FS, name string, v any) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %v", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// validate returns one "field: problem" per defect.
func validate(e Entry) []string {
	var p []string
	add := func(field, format string, args ...any) { p = append(p, field+": "+fmt.Sprintf(format, args...)) }
	if !idRE.MatchString(e.ID) {
		add("id", "%q is not a lowercase name", e.ID)
	}
	if e.Name == "" {
		add("name", "required")
	}
	if len(e.Match.Images)+len(e.Match.Charts)+len(e.Match.Labels)+len(e.Match.IngressControllers)+len(e.Match.Runtimes) == 0 {
		add("match", "at least one image, chart, label, ingress controller or runtime is required")
	}
	for i, r := range e.Match.Runtimes {
		if !idRE.MatchString(r) {
			add(fmt.Sprintf("match.runtimes[%d]", i), "%q is not a runtime name such as containerd", r)
		}
	}
	for i, img := range e.Match.Images {
		if _, err := ParseMatcher(img); err != nil {
			add(fmt.Sprintf("match.images[%d]", i), "%v", err)
		}
	}
	switch e.Support.Status {
	case StatusSupported, StatusRetired, StatusUnknown:
	default:
		add("support.status", "%q is not supported, retired or unknown", e.Support.Status)
	}
	checkDate(add, "support.eol", e.Support.EOL, false)
	if e.Support.ExtendedEOL != "" {
		checkDate(add, "support.extendedEol", e.Support.ExtendedEOL, false)
		if e.Support.ExtendedCondition == "" {
			add("support.extendedCondition", "required with extendedEol")
		}
	}
	checkCitations(add, "support.citations", e.Support.Citations)
	if e.Support.Status == StatusRetired && e.Recommendation == "" {
		add("recommendation", "required for a retired add-on")
	}
	for i, l := range e.Lines {
		f := fmt.Sprintf("lines[%d]", i)
		if !lineRE.MatchString(l.Line) {
			add(f+".line", "%q is not a release line such as 3.21", l.Line)
		}
		checkDate(add, f+".eol", l.EOL, true)
		if l.Kubernetes != nil {
			checkRange(add, f+".kubernetes", *l.Kubernetes)
		}
		checkCitations(add, f+".citations", l.Citations)
	}
	for i, c := range e.Compat {
		f := fmt.Sprintf("compat[%d]", i)
		if !semverRE.MatchString(c.Versions.From) {
			add(f+".versions.from", "%q is not a version such as 0.10.0", c.Versions.From)
		}
		if c.Versions.Before != "" && !semverRE.MatchString(c.Versions.Before) {
			add(f+".versions.before", "%q is not a version such as 0.18.0", c.Versions.Before)
		}
		checkRange(add, f+".kubernetes", c.Kubernetes)
		if c.Kubernetes.Min == "" && c.Kubernetes.Max == "" {
			add(f+".kubernetes", "min or max is required")
		}
		checkCitations(add, f+".citations", c.Citations)
	}
	return p
}

func checkDate(add func(string, string, ...any), field, v string, lineEOL bool) {
	if v == Unknown || lineEOL && (v == None || v == Ended) {
		return
	}
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		want := "a date (YYYY-MM-DD) or unknown"
		if lineEOL {
			want = "a date (YYYY-MM-DD), none (still supported), ended (date not given) or unknown"
		}
		add(field, "%q is not %s", v, want)
	}
}

func checkRange(add func(string, string, ...any), field string, r K8sRange) {
	for name, v := range map[string]string{"min": r.Min, "max": r.Max} {
		if v != "" && !minorRE.MatchString(v) {
			add(field+"."+name, "%q is not a Kubernetes minor such as 1.32", v)
		}
	}
}

// checkCitations requires at least one absolute http(s) URL.
func checkCitations(add func(string, string, ...any), field string, cites []string) {
	if len(cites) == 0 {
		add(field, "at least one citation URL is required")
	}
	for i, c := range cites {
		u, err := url.Parse(c)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add(fmt.Sprintf("%s[%d]", field, i), "%q is not an http(s) URL", c)
		}
	}
}

// crossCheck refuses two entries claiming the same chart, label, controller or image.
func crossCheck(entries map[string]Entry) []string {
	var p []string
	owner := map[string]string{}
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		e := entries[id]
		claims := map[string][]string{"image": e.Match.Images, "chart": e.Match.Charts, "label": e.Match.Labels,
			"ingressController": e.Match.IngressControllers, "runtime": e.Match.Runtimes}
		for kind, vs := range claims {
			for _, v := range vs {
				k := kind + " " + v
				if other, ok := owner[k]; ok {
					p = append(p, fmt.Sprintf("%s.yaml: match: %s %q is also claimed by %s", id, kind, v, other))
				}
				owner[k] = id
			}
		}
		for _, s := range e.Supersedes {
			if _, ok := entries[s]; !ok {
				p = append(p, fmt.Sprintf("%s.yaml: supersedes: unknown add-on %q", id, s))
			}
		}
	}
	return p
}

// ImageMatcher is an image matcher split into the repository path it matches (without the
// registry: mirrors match by path) and an optional tag glob.
type ImageMatcher struct {
	Path string `json:"path"`
	Tag  string `json:"tag"`
}

// ParseMatcher splits a canonical matcher: registry host, repository path, optional
// ":tag-glob". Canonical means the registry is spelled out (docker.io/library/traefik, not
// traefik), so the rules never have to guess one.
func ParseMatcher(m string) (ImageMatcher, error) {
	repo, tag := m, ""
	if i := strings.Index(m, ":*"); i > 0 {
		repo, tag = m[:i], m[i+1:]
	}
	registry, path, ok := strings.Cut(repo, "/")
	switch {
	case !ok || path == "" || strings.HasSuffix(path, "/"):
		return ImageMatcher{}, fmt.Errorf("%q is not registry/repository[:tag-glob]", m)
	case !strings.ContainsAny(registry, ".:") && registry != "localhost":
		return ImageMatcher{}, fmt.Errorf("%q does not start with a registry host (write docker.io/library/%s for an official image)", m, repo)
	case strings.ContainsAny(m, " @") || strings.ToLower(repo) != repo:
		return ImageMatcher{}, fmt.Errorf("%q is not a lowercase repository without digest", m)
	}
	return ImageMatcher{Path: path, Tag: tag}, nil
}

// Index is what the rules look evidence up by: image paths and labels to add-on ids.
type Index struct {
	ImagePaths map[string][]IndexedMatcher `json:"imagePaths"`
	// FirstSegments holds the first path segment of every image matcher: an image none of
	// whose segments is here cannot match, and is passed over without parsing.
	FirstSegments map[string]bool     `json:"firstSegments"`
	Labels        map[string][]string `json:"labels"`
	// Charts and IngressControllers map chart names and IngressClass controllers to ids.
	Charts             map[string][]string `json:"charts"`
	IngressControllers map[string][]string `json:"ingressControllers"`
	// Runtimes maps node container runtime names to ids.
	Runtimes map[string][]string `json:"runtimes"`
}

// IndexedMatcher is one add-on's claim on an image path.
type IndexedMatcher struct {
	ID  string `json:"id"`
	Tag string `json:"tag"`
}

// BuildIndex indexes validated entries.
func BuildIndex(entries map[string]Entry) Index {
	idx := Index{
		ImagePaths: map[string][]IndexedMatcher{}, FirstSegments: map[string]bool{}, Labels: map[string][]string{},
		Charts: map[string][]string{}, IngressControllers: map[string][]string{}, Runtimes: map[string][]string{},
	}
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, img := range entries[id].Match.Images {
			m, _ := ParseMatcher(img)
			idx.ImagePaths[m.Path] = append(idx.ImagePaths[m.Path], IndexedMatcher{ID: id, Tag: m.Tag})
			first, _, _ := strings.Cut(m.Path, "/")
			idx.FirstSegments[first] = true
		}
		for _, l := range entries[id].Match.Labels {
			idx.Labels[l] = append(idx.Labels[l], id)
		}
		for _, c := range entries[id].Match.Charts {
			idx.Charts[c] = append(idx.Charts[c], id)
		}
		for _, c := range entries[id].Match.IngressControllers {
			idx.IngressControllers[c] = append(idx.IngressControllers[c], id)
		}
		for _, r := range entries[id].Match.Runtimes {
			idx.Runtimes[r] = append(idx.Runtimes[r], id)
		}
	}
	return idx
}
