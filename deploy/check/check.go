// Package check validates what deploy/ ships for Kubernetes: the
// manifests in deploy/kubernetes and the Helm chart in deploy/helm/agentd.
//
// Every document must decode strictly (an unknown or misspelt field, or a
// value of the wrong type, is an error) into the Kubernetes API's Go type
// its apiVersion and kind name (the Prometheus operator's for a
// ServiceMonitor). The chart is first linted and rendered with Helm's own
// packages (helm.sh/helm/v3: pkg/lint is `helm lint`, pkg/engine with
// chartutil's values and schema handling is `helm template`), for several
// sets of values, and the rendered objects are checked for what the
// deployment relies on (probes, PDB, spread, checksums, GOMEMLIMIT, ...).
//
// It is a module of its own so that agentd does not depend on the
// Kubernetes or Helm libraries; `make test` runs it offline (nothing but
// Go modules), where a helm binary or kubeconform would have to be
// downloaded with their schemas.
package check
