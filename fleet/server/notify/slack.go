package notify

import (
	"encoding/json"
	"fmt"
	"strings"
)

// slackEscape escapes what Slack's mrkdwn reads as markup: &, < and >.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackURLEscape writes a URL for the inside of a Slack link, <url|text>: markup escaped as
// in text, and | (which would end the URL) percent-encoded.
var slackURLEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "%7C")

// SlackText is a body as one Slack message: one line for a single change, else a header
// line and a bullet per change, and one per kind with omitted changes. The cluster's name
// links to its dashboard page when the body has one, each change's title to the page at its
// target with its finding open, and every finding says who owns it.
func SlackText(b *Body) string {
	cluster := slackLink(b.Cluster.URL, b.Cluster.Name)
	if len(b.Changes) == 1 && len(b.Omitted) == 0 {
		c := b.Changes[0]
		return fmt.Sprintf("[upgradescope] %s → %s: %s: %s%s", cluster, targets(c), c.Kind, slackLink(c.URL, c.Title), owners(c))
	}
	total := len(b.Changes)
	for _, n := range b.Omitted {
		total += n
	}
	lines := []string{fmt.Sprintf("[upgradescope] %s: %d readiness changes", cluster, total)}
	for _, c := range b.Changes {
		lines = append(lines, fmt.Sprintf("• %s → %s: %s%s", c.Kind, targets(c), slackLink(c.URL, c.Title), owners(c)))
	}
	for _, kind := range []string{KindNewBlocker, KindBecameReady, KindEOLApproaching} {
		if n := b.Omitted[kind]; n > 0 {
			lines = append(lines, fmt.Sprintf("• and %d more %s", n, kind))
		}
	}
	return strings.Join(lines, "\n")
}

// slackLink is text as a Slack link to url, or the text alone without one, escaped.
func slackLink(url, text string) string {
	if url == "" {
		return slackEscape.Replace(text)
	}
	return "<" + slackURLEscape.Replace(url) + "|" + slackEscape.Replace(text) + ">"
}

func targets(c Change) string { return slackEscape.Replace(strings.Join(c.Targets, ", ")) }

// owners says who must act on a finding's change: its teams, or that no team owns it.
// became-ready is the whole cluster's, no one finding's.
func owners(c Change) string {
	switch {
	case c.Kind == KindBecameReady:
		return ""
	case len(c.Teams) == 0:
		return " (no owning team)"
	case len(c.Teams) == 1:
		return " (team " + slackEscape.Replace(c.Teams[0]) + ")"
	}
	return " (teams " + slackEscape.Replace(strings.Join(c.Teams, ", ")) + ")"
}

// slackPayload is the JSON a Slack incoming webhook takes.
func slackPayload(body []byte) ([]byte, error) {
	var b Body
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("read queued message: %w", err)
	}
	return json.Marshal(struct {
		Text string `json:"text"`
	}{SlackText(&b)})
}
