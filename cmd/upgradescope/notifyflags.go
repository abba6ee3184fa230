package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
)

// notifyFlags are serve's notification sinks. A webhook URL is a credential (whoever has
// it may post), so each comes literally, from a file, or from the environment, as tokens do.
type notifyFlags struct {
	slack, webhook, secret tokenFlag
	// publicURL is where people open the dashboard: messages link to a cluster's page.
	publicURL string
}

func (f *notifyFlags) register(cmd *cobra.Command) {
	f.slack.registerSecret(cmd, "slack-webhook", "UPGRADESCOPE_SLACK_WEBHOOK",
		"Slack incoming-webhook URL told when a cluster's readiness changes", "file holding the Slack webhook URL")
	f.webhook.registerSecret(cmd, "webhook", "UPGRADESCOPE_WEBHOOK",
		"URL POSTed a JSON body (docs/webhook.schema.json) when a cluster's readiness changes", "file holding the webhook URL")
	f.secret.registerSecret(cmd, "webhook-secret", "UPGRADESCOPE_WEBHOOK_SECRET",
		"key signing --webhook bodies: X-Upgradescope-Signature: sha256=<HMAC-SHA256>", "file holding the webhook signing key")
	cmd.Flags().StringVar(&f.publicURL, "public-url", "", "where people open the dashboard, as https://fleet.example.com: notifications link to each cluster's page under it (--path-prefix added when it names no path); without it they carry no link")
}

// dashboardURL is --public-url checked (server.NormalPublicURL), "" when not given.
func (f *notifyFlags) dashboardURL() (string, error) {
	u, err := server.NormalPublicURL(f.publicURL)
	if err != nil {
		return "", fmt.Errorf("--public-url: %w", err)
	}
	return u, nil
}

// registerSecret registers --name, --name-file and $env like register, with a file
// flag that says what the file holds.
func (t *tokenFlag) registerSecret(cmd *cobra.Command, name, env, usage, fileUsage string) {
	t.env = env
	cmd.Flags().StringVar(&t.literal, name, "", usage+" (or $"+env+"); prefer --"+name+"-file")
	cmd.Flags().StringVar(&t.file, name+"-file", "", fileUsage)
}

// sinks checks the flags and builds the sinks they name: none when no URL is given.
// URLs must be absolute http(s); errors show them only as scheme://host/….
func (f *notifyFlags) sinks() ([]notify.Sink, error) {
	var out []notify.Sink
	slackURL, err := f.slack.value("slack-webhook")
	if err != nil {
		return nil, err
	}
	if slackURL != "" {
		s, err := notify.NewSlack(slackURL)
		if err != nil {
			return nil, fmt.Errorf("--slack-webhook: %w", err)
		}
		out = append(out, s)
	}
	hookURL, err := f.webhook.value("webhook")
	if err != nil {
		return nil, err
	}
	secret, err := f.secret.value("webhook-secret")
	if err != nil {
		return nil, err
	}
	switch {
	case hookURL == "" && secret != "":
		return nil, fmt.Errorf("--webhook-secret signs --webhook bodies: give --webhook too")
	case hookURL == "":
		return out, nil
	}
	s, err := notify.NewWebhook(hookURL, secret)
	if err != nil {
		return nil, fmt.Errorf("--webhook: %w", err)
	}
	return append(out, s), nil
}
