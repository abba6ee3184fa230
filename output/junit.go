package output

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"

	"github.com/upgradescope/upgradescope/report"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

// junitProperty names a bundle revision each suite was judged with.
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitRenderer writes one testsuite per category and one testcase per finding: a failure when the
// finding fails the gate at failOn, skipped when suppressed, and an error per required gap so
// an unknown verdict fails the job.
type junitRenderer struct{ failOn string }

func (j junitRenderer) Render(w io.Writer, r *report.Report) error {
	failOn := j.failOn
	suites := map[string]*junitSuite{}
	add := func(name string, c junitCase) {
		s := suites[name]
		if s == nil {
			s = &junitSuite{Name: name}
			suites[name] = s
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	for _, t := range r.Targets {
		for _, f := range t.Findings {
			add(f.Category, findingCase(f, failOn))
		}
		for _, f := range t.Suppressed {
			c := findingCase(f, report.FailOnNever)
			c.Skipped = &junitMessage{Message: "suppressed: " + f.Suppression.Reason}
			add(f.Category, c)
		}
		for _, g := range t.NotAssessed {
			if g.Required {
				add("not-assessed", junitCase{
					Name: fmt.Sprintf("%s @ %s", g.Capability, t.Target), Classname: "not-assessed",
					Error: &junitMessage{Message: g.Capability + " not assessed: " + g.Reason, Type: "unknown"},
				})
			}
		}
	}
	out := junitSuites{Name: "upgradescope"}
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	sort.Strings(names)
	var props []junitProperty
	for _, b := range r.Bundles {
		props = append(props, junitProperty{Name: "bundle." + b.Name, Value: b.Revision + " (" + b.Source + ")"})
	}
	for _, n := range names {
		s := suites[n]
		s.Properties = props
		out.Suites = append(out.Suites, *s)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func findingCase(f report.Finding, failOn string) junitCase {
	c := junitCase{Name: fmt.Sprintf("%s @ %s", f.Key, f.Target), Classname: f.Category}
	switch {
	case !f.Introduced():
		c.Skipped = &junitMessage{Message: alreadyInCluster}
	case report.Fails(f.Severity, failOn):
		c.Failure = &junitMessage{Message: f.Title, Type: f.Severity, Text: f.Detail + "\n" + f.Remediation + withChartFix(f)}
	}
	return c
}
