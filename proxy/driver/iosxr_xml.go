package driver

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/scrapli/scrapligo/driver/opoptions"
)

// The IOS XR XML agent (NAPALM's iosxr driver through pyIOSXR): "xml" on
// the SSH CLI enters the agent, whose prompt is "XML>"; each request is one
// document
//
//	<?xml version="1.0" encoding="UTF-8"?><Request MajorVersion="1" MinorVersion="0">BODY</Request>
//
// on one line, answered by a <Response> document and the prompt again;
// "exit" returns to the CLI. The getters build the same BODY as NAPALM's
// driver, parse the reply with the small element tree below (lxml's
// find_txt/xpath subset NAPALM uses) and return NAPALM's dicts.
//
// Selection: getters the CLI path lacks (environment, MAC table,
// interfaces counters, SNMP, users, BGP configuration and neighbour
// detail, route_to, probes) always use the agent, as NAPALM does; the
// others use it when optional_args has xml_agent: true (NAPALM's
// behaviour for every getter), and the CLI otherwise, so devices without
// "xml agent tty" keep working.

// descendants appends every element below n, in document order.
func (n *xnode) descendants(out []*xnode) []*xnode {
	for _, k := range n.kids {
		out = append(out, k)
		out = k.descendants(out)
	}
	return out
}

// xpathStepRe is one step of the XPath subset: a name ("*" too) with an
// optional [N] (1-based) or [last()] predicate.
var xpathStepRe = regexp.MustCompile(`^([\w*]+)(?:\[(\d+|last\(\))\])?$`)

// all evaluates a path of NAPALM's XPath subset from n: "A/B/C" (children),
// ".//A/B" (A anywhere below n), "." (n), steps with [N] or [last()];
// matches come in document order.
func (n *xnode) all(path string) []*xnode {
	if n == nil {
		return nil
	}
	path = strings.Join(strings.Fields(path), "") // NAPALM's paths carry line continuations
	cur := []*xnode{n}
	if rest, ok := strings.CutPrefix(path, ".//"); ok {
		cur = n.descendants(nil)
		path = rest
		first, tail, _ := strings.Cut(path, "/")
		cur = filterStep(cur, first)
		path = tail
	}
	for step := range strings.SplitSeq(path, "/") {
		if step == "" || step == "." {
			continue
		}
		var next []*xnode
		for _, c := range cur {
			next = append(next, filterStep(c.kids, step)...)
		}
		cur = next
	}
	return cur
}

// filterStep keeps the nodes matching one path step.
func filterStep(nodes []*xnode, step string) []*xnode {
	m := xpathStepRe.FindStringSubmatch(step)
	if m == nil {
		return nil
	}
	var out []*xnode
	for _, c := range nodes {
		if m[1] == "*" || c.local == m[1] {
			out = append(out, c)
		}
	}
	switch {
	case m[2] == "":
		return out
	case m[2] == "last()":
		if len(out) == 0 {
			return nil
		}
		return out[len(out)-1:]
	}
	i, _ := strconv.Atoi(m[2])
	if i < 1 || i > len(out) {
		return nil
	}
	return out[i-1 : i]
}

// first returns the first match of path, nil when there is none.
func (n *xnode) first(path string) *xnode {
	if l := n.all(path); len(l) > 0 {
		return l[0]
	}
	return nil
}

// txt is NAPALM's find_txt(tree, path): the stripped text of the first
// match, "" when nothing matches.
func (n *xnode) txt(path string) string {
	return n.txtOr(path, "")
}

// txtOr is find_txt(tree, path, default): default when the first match
// has no text, "" when nothing matches.
func (n *xnode) txtOr(path, def string) string {
	f := n.first(path)
	if f == nil {
		return ""
	}
	if f.text == "" {
		return def
	}
	return strings.TrimSpace(f.text)
}

// pyInt is NAPALM's convert(int, s, def): Python's int() of a string
// (surrounding spaces allowed), def when it does not parse.
func pyInt(s string, def int64) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(strings.ReplaceAll(s, "_", "")), 10, 64)
	if err != nil {
		return def
	}
	return v
}

// pyFloat is convert(float, s, def).
func pyFloat(s string, def float64) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return def
	}
	return v
}

// xrRequest wraps a request body into the agent's request document.
func xrRequest(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Request MajorVersion="1" MinorVersion="0">` + body + `</Request>`
}

// ErrXMLAgent marks a reply of the XML agent reporting an error.
var ErrXMLAgent = errors.New("iosxr XML agent error")

// xrAgentErrorRe matches the agent's own error lines ("ERROR: 0x24319600 ...").
var xrAgentErrorRe = regexp.MustCompile(`ERROR: 0x[0-9a-fA-F]+`)

// xrCheckReply parses a reply and reports the errors pyIOSXR raises: a
// ResultSummary with errors (the CLI, Commit or root ErrorMsg), an
// iterator (the agent must run with "iteration off"), or CLI output
// saying the input was invalid.
func xrCheckReply(req, reply string) (*xnode, error) {
	if i := strings.Index(reply, "<?xml"); i > 0 {
		reply = reply[i:]
	} else if i := strings.Index(reply, "<Response"); i > 0 {
		reply = reply[i:]
	}
	if j := strings.LastIndex(reply, "</Response>"); j >= 0 {
		reply = reply[:j+len("</Response>")]
	}
	doc, err := parseXML(reply)
	var root *xnode
	if err == nil {
		if len(doc.kids) == 0 {
			err = errors.New("no element")
		} else {
			root = doc.kids[0]
		}
	}
	if err != nil {
		if m := xrAgentErrorRe.FindString(reply); m != "" {
			return nil, fmt.Errorf("%w: %s", ErrXMLAgent, strings.TrimSpace(reply))
		}
		return nil, fmt.Errorf("%w: unable to process the XML Response from the device: %w", ErrXMLAgent, err)
	}
	if rs := root.first("ResultSummary"); rs != nil && pyInt(rs.attr("ErrorCount"), 0) > 0 {
		msg := root.attr("ErrorMsg")
		for _, k := range []string{"CLI", "Commit"} {
			if c := root.first(k); c != nil {
				msg = c.attr("ErrorMsg")
				break
			}
		}
		if msg == "" {
			// the failing element carries the message
			for _, d := range root.descendants(nil) {
				if m := d.attr("ErrorMsg"); m != "" {
					msg = m
					break
				}
			}
		}
		return root, fmt.Errorf("%w: %s\nOriginal call was: %s", ErrXMLAgent, msg, xrRequest(req))
	}
	for _, k := range []string{"CLI/Configuration", "CLI/Exec"} {
		if c := root.first(k); c != nil && strings.Contains(c.text, "Invalid input detected") {
			return root, fmt.Errorf("%w: Invalid input entered:\n%s", ErrXMLAgent, c.text)
		}
	}
	return root, nil
}

// xrRPCRunner is a runner that also answers XML agent requests directly
// (tests: NAPALM's fixture replies).
type xrRPCRunner interface {
	rpc(body string) (string, error)
}

// rpc implements xrRPCRunner for canned outputs: the request body is the
// command.
func (c *cannedRunner) rpc(body string) (string, error) {
	out, ok := c.answer(body)
	if !ok {
		return "", c.errf(ErrCommand, body, errors.New("no canned reply"))
	}
	return out, nil
}

// xrIteratorMsg is pyIOSXR's error for a reply cut by the agent's
// iterator.
const xrIteratorMsg = `Non-supported IteratorID in response object. Turn iteration off on your XML agent by configuring "xml agent [tty | ssl] iteration off".`

// xrXMLPrompt is the agent's prompt.
var xrXMLPrompt = regexp.MustCompile(`(?m)XML>\s*$`)

// xrAgent runs fn with a function sending requests to the XML agent: on a
// live connection it enters the agent ("xml"), and leaves it ("exit")
// afterwards so the session stays usable by the CLI getters.
func xrAgent(o runner, fn func(rpc func(body string) (*xnode, error)) error) error {
	if c, ok := o.(xrRPCRunner); ok {
		return fn(func(body string) (*xnode, error) {
			reply, err := c.rpc(body)
			if err != nil {
				return nil, err
			}
			return xrCheckReply(body, reply)
		})
	}
	op, ok := o.(*op)
	if !ok {
		return fmt.Errorf("%w: iosxr: no XML agent on this runner", ErrNotSupported)
	}
	interim := opoptions.WithInterimPromptPattern([]*regexp.Regexp{xrXMLPrompt})
	if err := op.budget("xml"); err != nil {
		return err
	}
	b, err := op.d.Channel.SendInput("xml", interim)
	if err != nil {
		return op.fail("xml", err)
	}
	if !xrXMLPrompt.Match(bytes.TrimRight(b, " \r\n")) && !xrXMLPrompt.Match(b) {
		if strings.Contains(string(b), "0x24319600") {
			return op.s.errf(ErrConnect, "xml", errors.New("XML agent is not enabled. Please configure `xml agent tty iteration off`!"))
		}
		return op.s.errf(ErrCommand, "xml", errors.New(deviceMessage(string(b))))
	}
	ferr := fn(func(body string) (*xnode, error) {
		doc := xrRequest(body)
		if err := op.budget(body); err != nil {
			return nil, err
		}
		op.s.log.Debug("driver: xml request", "driver", op.s.name, "addr", op.s.addr, "request", body)
		out, err := op.d.Channel.SendInput(doc, interim)
		if err != nil {
			return nil, op.fail(body, err)
		}
		reply := string(out)
		if !strings.Contains(reply, "</Response>") {
			op.fatal = true // the agent left or died: the channel state is unknown
			return nil, op.s.errf(ErrXMLAgent, body, errors.New("no XML response: "+deviceMessage(reply)))
		}
		root, err := xrCheckReply(body, reply)
		if err == nil && root.attr("IteratorID") != "" {
			// a partial reply: pyIOSXR refuses it the same way
			return nil, fmt.Errorf("%w: %s", ErrXMLAgent, xrIteratorMsg)
		}
		return root, err
	})
	if op.fatal {
		return ferr
	}
	if err := op.budget("exit"); err != nil {
		return errors.Join(ferr, err)
	}
	if _, err := op.d.Channel.SendInput("exit"); err != nil {
		return errors.Join(ferr, op.fail("exit", err))
	}
	return ferr
}
