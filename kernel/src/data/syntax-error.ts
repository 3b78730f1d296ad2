/**
 * A file the data commands read (an ejabberd.cfg, a Prosody data file) that does not parse: where, and why,
 * as `file:line:column: reason`, which the commands pass on to the operator as it is.
 */
export class FileSyntaxError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    reason: string,
  ) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.name = new.target.name;
  }
}
