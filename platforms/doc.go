// Package platforms reads and writes SimGrid XML platform files (v3, v4, v4.1)
// as one flat, validated model of hosts, links and routes.
package platforms
