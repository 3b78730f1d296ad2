/**
 * The admin's HTTP API calls that tests make to set things up and to check commands: the bootstrap admin's
 * Basic credentials, a call that returns status and parsed body, and one that must succeed. One place, so
 * that a test reads as the command it checks.
 */
import { expect } from 'chai';
import type { TestServer } from './server.js';

/** The account TestServer.bootstrapAdmin creates. */
export const ADMIN = 'admin@localhost:adminpass';

export async function api(t: TestServer, command: string, args: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await t.api(command, args, { basic: ADMIN });
  return { status: res.status, body: JSON.parse(res.text) };
}

export async function ok(t: TestServer, command: string, args: Record<string, unknown>): Promise<any> {
  const res = await api(t, command, args);
  expect(res.status, `${command}: ${JSON.stringify(res.body)}`).to.equal(200);
  return res.body;
}
