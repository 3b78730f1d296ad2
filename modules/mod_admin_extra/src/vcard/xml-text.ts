/**
 * Text an admin command stores and clients later receive inside a stanza (a vCard value, a last-activity
 * status) must be characters XML 1.0 can carry: a control character or a lone surrogate would be stored
 * fine and then make every stanza carrying it unparsable for the client, or the stored vCard unreadable.
 */
import { badArgument } from '@service/plugin-api';

// XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws bad_argument naming `argument` when `text` holds a character XML cannot carry. */
export function checkXmlText(argument: string, text: string): string {
  const bad = NOT_XML_CHAR.exec(text);
  if (bad) {
    const code = `U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    throw badArgument(argument, `argument '${argument}' holds ${code} at position ${bad.index}, a character XML cannot carry`);
  }
  return text;
}
