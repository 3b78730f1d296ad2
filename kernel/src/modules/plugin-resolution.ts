/**
 * Makes plugins share the server's copy of its packages: registers resolve-hooks.ts for the process, once,
 * before the first module is imported. See resolve-hooks.ts for what it does and why.
 */
import { register } from 'node:module';

let registered = false;

export function shareServerPackages(): void {
  if (registered) return;
  registered = true;
  register(new URL('./resolve-hooks.js', import.meta.url), { data: { parentURL: import.meta.url } });
}
