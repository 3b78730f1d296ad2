/**
 * saxes reads everything after a `&` up to the next `;` as an entity name, so a bare ampersand
 * (`<body>a & b</body>…`) is only reported when the stream ends — a peer could stall the parser with it.
 * This scan checks, chunk by chunk, that each `&` outside CDATA sections starts a reference of the XML
 * grammar (`&name;`, `&#123;`, `&#x1F;`) and says so at once when it does not.
 */
const REFERENCE_CHAR = /[A-Za-z0-9_:.#-]/;
const MAX_REFERENCE = 40;
const CDATA_OPEN = '<![CDATA[';
const CDATA_CLOSE = ']]>';

export class ReferenceGuard {
  #inCdata = false;
  /** Characters of a reference being read, after the `&`; undefined outside one. */
  #reference: string | undefined;
  /** The end of the previous chunk, to recognize a CDATA marker split across chunks. */
  #tail = '';

  /** Returns a problem description, or undefined when the text is fine so far. */
  check(text: string): string | undefined {
    // Most chunks hold neither an ampersand nor a bracket, outside any reference or CDATA section: nothing
    // to scan character by character, only the tail to keep.
    if (!this.#inCdata && this.#reference === undefined && !text.includes('&') && !text.includes('[')) {
      this.#tail = text.length >= CDATA_OPEN.length ? text.slice(-CDATA_OPEN.length) : (this.#tail + text).slice(-CDATA_OPEN.length);
      return undefined;
    }
    const input = this.#tail + text;
    const from = this.#tail.length;
    for (let i = from; i < input.length; i++) {
      const c = input[i]!;
      if (this.#inCdata) {
        if (c === '>' && input.slice(i - 2, i + 1) === CDATA_CLOSE) this.#inCdata = false;
        continue;
      }
      if (this.#reference !== undefined) {
        if (c === ';') {
          if (this.#reference === '' || this.#reference === '#' || this.#reference === '#x') return 'an ampersand not followed by a reference';
          this.#reference = undefined;
        } else if (!REFERENCE_CHAR.test(c) || this.#reference.length >= MAX_REFERENCE) {
          return 'an ampersand that does not start an entity or character reference (write &amp;)';
        } else this.#reference += c;
        continue;
      }
      if (c === '&') this.#reference = '';
      else if (c === '[' && input.slice(i - CDATA_OPEN.length + 1, i + 1) === CDATA_OPEN) this.#inCdata = true;
    }
    this.#tail = input.slice(-CDATA_OPEN.length);
    return undefined;
  }
}
