package slacktest

import (
	"fmt"
	"net/url"
	"unicode/utf8"
)

// Limits of Block Kit and chat.postMessage that Slack enforces, in
// characters (Unicode code points), from Slack's Block Kit reference
// (https://docs.slack.dev/reference/block-kit/) and its note on truncating
// long messages. A message over a block limit is refused with invalid_blocks;
// a text over maxText is cut and posted with a message_truncated warning.
const (
	maxBlocks       = 50
	maxBlockID      = 255
	maxSectionText  = 3000
	maxSectionField = 2000
	maxHeaderText   = 150
	maxButtonText   = 75
	maxActionID     = 255
	maxButtonValue  = 2000
	maxURL          = 3000
	maxText         = 40000
	// A select menu of static options holds 1 to 100 options and a
	// placeholder of at most 150 characters; an option object's text is
	// at most 75 characters and its value at most 150 (Block Kit
	// reference: "Select menu element", static_select, and "Option
	// object"). An actions block holds at most 25 elements and a context
	// block 10 (Block Kit reference: "Actions block", "Context block").
	maxOptions        = 100
	maxPlaceholder    = 150
	maxOptionText     = 75
	maxOptionValue    = 150
	maxActionElements = 25
	maxContextItems   = 10
)

// checkBlocks returns Slack's complaints about blocks, each ending in the
// JSON pointer of the offending field as Slack writes it, or nil.
func checkBlocks(blocks []map[string]any) []string {
	var c blockCheck
	if len(blocks) > maxBlocks {
		c.add("/blocks", "no more than %d items allowed", maxBlocks)
	}
	for i, b := range blocks {
		c.block(fmt.Sprintf("/blocks/%d", i), b)
	}
	return c.errs
}

// blockCheck gathers what Slack would refuse of a message's blocks, each
// with the JSON pointer Slack's invalid_blocks answer names.
type blockCheck struct{ errs []string }

func (c *blockCheck) add(ptr, format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...)+" [json-pointer:"+ptr+"]")
}

// length checks that v is a string of minLen to maxLen characters.
func (c *blockCheck) length(ptr string, v any, minLen, maxLen int) {
	s, ok := v.(string)
	if !ok {
		c.add(ptr, "must be a string")
		return
	}
	switch n := utf8.RuneCountInString(s); {
	case n < minLen:
		c.add(ptr, "must be more than %d characters", minLen-1)
	case n > maxLen:
		c.add(ptr, "must be less than %d characters", maxLen+1)
	}
}

// text checks a text object of at most maxLen characters.
func (c *blockCheck) text(ptr string, v any, maxLen int) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must be an object")
		return
	}
	c.length(ptr+"/text", obj["text"], 1, maxLen)
}

// block checks one block of the types the bot sends.
func (c *blockCheck) block(ptr string, b map[string]any) {
	if id, ok := b["block_id"]; ok {
		c.length(ptr+"/block_id", id, 1, maxBlockID)
	}
	switch b["type"] {
	case "section":
		if t, ok := b["text"]; ok {
			c.text(ptr+"/text", t, maxSectionText)
		}
		if fields, ok := b["fields"].([]any); ok {
			for j, f := range fields {
				c.text(fmt.Sprintf("%s/fields/%d", ptr, j), f, maxSectionField)
			}
		}
		if acc, ok := b["accessory"]; ok {
			c.element(ptr+"/accessory", acc)
		}
	case "header":
		c.text(ptr+"/text", b["text"], maxHeaderText)
	case "context":
		if elements, _ := b["elements"].([]any); len(elements) > maxContextItems {
			c.add(ptr+"/elements", "no more than %d items allowed", maxContextItems)
		}
	case "actions":
		elements, _ := b["elements"].([]any)
		if len(elements) > maxActionElements {
			c.add(ptr+"/elements", "no more than %d items allowed", maxActionElements)
		}
		for j, el := range elements {
			c.element(fmt.Sprintf("%s/elements/%d", ptr, j), el)
		}
	}
}

// element checks an interactive element: a button, or a static select.
func (c *blockCheck) element(ptr string, v any) {
	el, ok := v.(map[string]any)
	if !ok {
		c.add(ptr, "must be an object")
		return
	}
	if el["type"] == "static_select" {
		c.staticSelect(ptr, el)
		return
	}
	if el["type"] != "button" {
		return // the bot uses no other element
	}
	c.text(ptr+"/text", el["text"], maxButtonText)
	if id, ok := el["action_id"]; ok {
		c.length(ptr+"/action_id", id, 1, maxActionID)
	}
	if v, ok := el["value"]; ok {
		c.length(ptr+"/value", v, 1, maxButtonValue)
	}
	if u, ok := el["url"]; ok {
		if s, _ := u.(string); !validURL(s) {
			c.add(ptr+"/url", "invalid url")
		}
	}
}

// staticSelect checks a static select menu and its options.
func (c *blockCheck) staticSelect(ptr string, el map[string]any) {
	if id, ok := el["action_id"]; ok {
		c.length(ptr+"/action_id", id, 1, maxActionID)
	}
	if p, ok := el["placeholder"]; ok {
		c.text(ptr+"/placeholder", p, maxPlaceholder)
	}
	opts, _ := el["options"].([]any)
	if len(opts) < 1 || len(opts) > maxOptions {
		c.add(ptr+"/options", "must have 1 to %d items", maxOptions)
	}
	for j, o := range opts {
		opt, _ := o.(map[string]any)
		c.text(fmt.Sprintf("%s/options/%d/text", ptr, j), opt["text"], maxOptionText)
		c.length(fmt.Sprintf("%s/options/%d/value", ptr, j), opt["value"], 1, maxOptionValue)
	}
}

// validURL reports whether Slack takes u as a link button's URL: an https
// URL with a host, at most maxURL characters, without spaces, control or
// non-ASCII characters (which a URL must percent-encode).
func validURL(u string) bool {
	if u == "" || utf8.RuneCountInString(u) > maxURL {
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] >= 0x7f {
			return false
		}
	}
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "https" && p.Host != "" && p.Opaque == ""
}

// invalidBlocks is Slack's answer to blocks it refuses.
func invalidBlocks(errs []string) response {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = "[ERROR] " + e
	}
	r := slackErr("invalid_blocks")
	r.body["errors"] = errs
	r.body["response_metadata"] = map[string]any{"messages": msgs}
	return r
}

// truncate cuts text to maxText characters, as Slack does, and reports
// whether it did.
func truncate(text string) (string, bool) {
	if utf8.RuneCountInString(text) <= maxText {
		return text, false
	}
	n := 0
	for i := range text {
		if n == maxText {
			return text[:i], true
		}
		n++
	}
	return text, false
}
