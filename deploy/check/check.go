// Package check validates the Kubernetes manifests in deploy/kubernetes
// against the Kubernetes API's own Go types: every document must decode
// strictly (an unknown or misspelt field is an error) into the type its
// apiVersion and kind name. It is a module of its own so that agentd does
// not depend on the Kubernetes libraries; `make test` runs it offline,
// where kubeconform would need to download its schemas.
package check
