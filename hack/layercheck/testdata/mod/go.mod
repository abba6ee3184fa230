module example.com/layers

go 1.26

require github.com/open-policy-agent/opa v0.0.0

replace github.com/open-policy-agent/opa => ./fakeopa
