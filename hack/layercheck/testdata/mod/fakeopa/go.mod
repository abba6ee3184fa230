module github.com/open-policy-agent/opa

go 1.26
