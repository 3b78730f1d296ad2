/**
 * The JSON error envelope of every HTTP error: {"status":"error","code":<int>,"message":"<text>"}, with
 * the HTTP status and code taken from the error kind's entry in ERROR_KINDS.
 */
import { ERROR_KINDS, type CommandError, type ErrorKind } from '../commands/errors.js';
import type { HttpContext } from './types.js';

/** What koa's `ctx.type = 'application/json'` sets, without looking the type up on every response. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendError(ctx: HttpContext, kind: ErrorKind, message: string): void {
  const info = ERROR_KINDS[kind];
  ctx.status = info.http;
  ctx.set('Content-Type', JSON_CONTENT_TYPE);
  ctx.body = JSON.stringify({ status: 'error', code: info.code, message });
}

/** A command error as the envelope, with Retry-After when the error says when to try again. */
export function sendCommandError(ctx: HttpContext, error: CommandError): void {
  if (error.retryAfter !== undefined) ctx.set('Retry-After', String(error.retryAfter));
  sendError(ctx, error.kind, error.message);
}

export function sendJson(ctx: HttpContext, value: unknown, status = 200): void {
  ctx.status = status;
  ctx.set('Content-Type', JSON_CONTENT_TYPE);
  ctx.body = JSON.stringify(value);
}
