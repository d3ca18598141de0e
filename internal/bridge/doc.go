// Package bridge joins A2A and MCP, so that each protocol edge speaks
// only its own protocol: it serves A2A agents (agentd's own and the
// discovered external ones) as MCP tools (Bridge), and runs the tasks of
// the MCP tool proxy agent, which serves an upstream MCP server's tools
// as an A2A agent (Proxy). It is the one package that imports both
// protocol SDKs.
package bridge
