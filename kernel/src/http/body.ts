/**
 * Reads a request body as UTF-8 text with a hard size cap: a declared Content-Length over the cap is
 * refused before reading, and a body that grows past it while streaming is cut off. Either way the caller
 * gets a `too_large` CommandError, which the listener turns into a 413.
 */
import { StringDecoder } from 'node:string_decoder';
import { CommandError } from '../commands/errors.js';
import type { HttpContext } from './types.js';

export async function readBodyText(ctx: HttpContext, limit: number): Promise<string> {
  const tooLarge = () => new CommandError('too_large', `request body exceeds ${limit} bytes (max_body_size of this listener)`);
  const declared = Number(ctx.get('content-length') || NaN);
  if (declared > limit) throw tooLarge();
  const decoder = new StringDecoder('utf8');
  let size = 0;
  let text = '';
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      // Stop reading; the connection is closed after the 413 so the rest is not parsed.
      ctx.set('Connection', 'close');
      throw tooLarge();
    }
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}
