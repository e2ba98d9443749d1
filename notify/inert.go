package notify

import "unicode"

// Event text (a title, an organizer's name) is written by whoever sends the
// invitation, and Slack's mrkdwn would let it draw lines of its own
// ("\n*Join:* https://evil.example"), format itself, or hide and reorder
// characters. inert makes it one line of plain text that reads as typed.

// lookalike replaces a mrkdwn marker that could open or close formatting
// with a character that looks the same and that Slack does not parse.
var lookalike = map[rune]rune{
	'*': '∗', // U+2217 ASTERISK OPERATOR
	'_': 'ˍ', // U+02CD MODIFIER LETTER LOW MACRON
	'~': '∼', // U+223C TILDE OPERATOR
	'`': 'ˋ', // U+02CB MODIFIER LETTER GRAVE ACCENT
}

// lineStart replaces a quote or list marker that starts a field, where
// Slack would render a quote or a list item.
var lineStart = map[rune]rune{
	'>': '˃', // U+02C3 MODIFIER LETTER RIGHT ARROWHEAD
	'-': '‐', // U+2010 HYPHEN
	'+': '＋', // U+FF0B FULLWIDTH PLUS SIGN
	'*': '∗',
	'•': '∙', // U+2219 BULLET OPERATOR
}

// numberEnd replaces the "." or ")" of a number that starts a field
// ("1. item"), where Slack would render a numbered list item.
var numberEnd = map[rune]rune{
	'.': '․', // U+2024 ONE DOT LEADER
	')': '）', // U+FF09 FULLWIDTH RIGHT PARENTHESIS
}

// inert returns event text s as one line that Slack shows as typed, not yet
// escaped (see escape):
//   - line breaks and tabs become one space, runs of spaces one space, and
//     the ends are trimmed, so it draws no line of its own;
//   - other control characters (C0, C1, DEL) and invisible format
//     characters (bidi overrides and isolates, zero-width spaces and
//     joiners, the byte order mark; Unicode category Cf) are dropped, so
//     nothing is hidden or shown reversed, except a zero-width joiner
//     between two emoji, which builds one emoji ("👨‍👩‍👧");
//   - a *, _, ~ or ` that could open or close bold, italics, strikethrough
//     or code becomes a look-alike Slack does not parse, and so does a quote
//     or list marker (>, -, +, *, •, "1.") that starts the text; markers
//     inside words ("snake_case", "2*3") or between spaces ("A * B") stay.
func inert(s string) string {
	runes := clean(s)
	out := make([]rune, len(runes))
	for i, r := range runes {
		out[i] = r
		l, ok := lookalike[r]
		if !ok {
			continue
		}
		var prev, next rune = -1, -1
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		opens := !wordRune(prev) && next != -1 && next != ' '
		closes := !wordRune(next) && prev != -1 && prev != ' '
		if opens || closes {
			out[i] = l
		}
	}
	if len(out) > 1 && out[1] == ' ' {
		if l, ok := lineStart[out[0]]; ok {
			out[0] = l
		}
	} else if len(out) > 0 && out[0] == '>' {
		out[0] = lineStart['>']
	}
	if n := leadingDigits(out); n > 0 && n+1 < len(out) && numberEnd[out[n]] != 0 && out[n+1] == ' ' {
		out[n] = numberEnd[out[n]]
	}
	return string(out)
}

// clean folds line breaks and runs of spaces into single spaces, drops
// control and invisible format characters, and trims the result.
func clean(s string) []rune {
	in := []rune(s)
	var out []rune
	space := false
	for i, r := range in {
		switch {
		case unicode.IsSpace(r):
			space = len(out) > 0
			continue
		case r == '\u200d' && len(out) > 0 && emojiPart(out[len(out)-1]) && i+1 < len(in) && emoji(in[i+1]):
			// A joiner inside an emoji sequence: keep.
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	return out
}

// wordRune reports whether r is part of a word, so that a marker next to it
// cannot open (before it) or close (after it) formatting. -1 stands for
// the start or end of the text.
func wordRune(r rune) bool {
	return r != -1 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// emoji reports whether r is a pictograph an emoji sequence joins.
func emoji(r rune) bool { return unicode.Is(unicode.So, r) }

// emojiPart reports whether r may end the part of an emoji sequence before
// a joiner: a pictograph, a skin tone modifier or the emoji presentation
// selector.
func emojiPart(r rune) bool {
	return emoji(r) || unicode.Is(unicode.Sk, r) || r == '\ufe0f'
}

func leadingDigits(rs []rune) int {
	n := 0
	for n < len(rs) && rs[n] >= '0' && rs[n] <= '9' {
		n++
	}
	return n
}
