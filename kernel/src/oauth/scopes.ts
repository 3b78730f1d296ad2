/**
 * Which scopes a token may carry: sasl_auth, service:admin, service:user, a scope a module declares, or the
 * name of a command that is loaded now and may run outside the command line. Anything else — a command of
 * a module that is not enabled, a command-line-only command (help, mnesia_change…: no token could ever run
 * it) — is an `invalid_scope` error, wherever a token is requested.
 */
import type { CommandRegistry } from '../commands/registry.js';
import type { ScopeRegistry } from '../modules/scopes.js';

export class InvalidScope extends Error {
  constructor(readonly scopes: readonly string[]) {
    super(
      `invalid_scope: ${scopes.map((s) => `'${s}'`).join(', ')} ${scopes.length === 1 ? 'is' : 'are'} not a scope of this server ` +
        '(scopes are sasl_auth, service:admin, service:user, or the name of a loaded command that is not for the command line only)',
    );
    this.name = 'InvalidScope';
  }
}

/** Splits a scope parameter: OAuth separates with spaces; the authorization endpoint's URLs with '+'. */
export function splitScopes(text: string): string[] {
  return [...new Set(text.split(/[\s+]+/).filter(Boolean))];
}

export function isScope(name: string, declared: ScopeRegistry, commands: CommandRegistry): boolean {
  if (declared.has(name)) return true;
  const command = commands.resolve(name);
  return command !== undefined && !command.decl.cliOnly;
}

/** Every scope a token may carry now: the declared ones, then one per loaded command callable with a token. */
export function allScopes(declared: ScopeRegistry, commands: CommandRegistry): string[] {
  return [...declared.list().map((s) => s.name), ...commands.names().filter((name) => isScope(name, declared, commands))];
}

/** The scopes, each once, in the order first given; throws InvalidScope naming the bad ones (or none given). */
export function checkScopes(scopes: readonly string[], declared: ScopeRegistry, commands: CommandRegistry): string[] {
  if (scopes.length === 0) throw new InvalidScope(['(none)']);
  const unique = [...new Set(scopes)];
  const bad = unique.filter((s) => !isScope(s, declared, commands));
  if (bad.length) throw new InvalidScope(bad);
  return unique;
}
