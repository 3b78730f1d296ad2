/**
 * Reads a request body as UTF-8 text with a hard size cap: a declared Content-Length over the cap is
 * refused before reading, and a body that grows past it while streaming is cut off. Either way the caller
 * gets a `too_large` CommandError, which the listener turns into a 413. Bytes that are not UTF-8 are a
 * `bad_request` (400): JSON and XML both require it, and replacing them with U+FFFD would store names and
 * texts nobody sent.
 */
import { isUtf8 } from 'node:buffer';
import { CommandError } from '../commands/errors.js';
import type { HttpContext } from './types.js';

export async function readBodyText(ctx: HttpContext, limit: number): Promise<string> {
  const tooLarge = () => new CommandError('too_large', `request body exceeds ${limit} bytes (max_body_size of this listener)`);
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw tooLarge();
  // Plain listeners rather than `for await`: the async iterator costs more than a small body. The bytes are
  // checked and decoded once at the end: a TextDecoder per request builds an ICU converter (2 % of a
  // small request's CPU), and the body is capped anyway.
  const req = ctx.req;
  // A small body usually arrives with the headers: by the time a handler asks, the parser has buffered all of
  // it and nothing has read it yet, so it is taken at once, without listeners or a promise. "All of it" is
  // the declared length: the handler runs between the parser's body and message-complete callbacks (Node
  // drains the microtasks after each), so `complete` is still false for a body that is all here.
  const buffered = req.complete || (declared >= 0 && req.readableLength === declared);
  if (buffered && !req.readableDidRead && req.readableLength <= limit && req.readableEncoding === null) {
    const body = (req.read() as Buffer | null) ?? Buffer.alloc(0);
    if (!isUtf8(body)) throw notUtf8(ctx);
    return textOf(body);
  }
  return new Promise<string>((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop reading; the connection is closed after the 413 so the rest is not parsed.
        ctx.set('Connection', 'close');
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      if (!isUtf8(body)) return reject(notUtf8(ctx));
      resolve(textOf(body));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new CommandError('bad_request', `the request body could not be read: ${err.message}`));
    };
    const onAborted = () => onError(new Error('the client aborted the request'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/** The refusal of a body that is not UTF-8; the connection is closed after it. */
function notUtf8(ctx: HttpContext): CommandError {
  ctx.set('Connection', 'close');
  return new CommandError('bad_request', 'the request body is not valid UTF-8');
}

/** The body's text. A byte order mark is not part of it (TextDecoder dropped it too). */
function textOf(body: Buffer): string {
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
