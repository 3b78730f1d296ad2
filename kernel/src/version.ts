/** The kernel's version, from its package.json: modules declare the range they support against it. */
import { readFileSync } from 'node:fs';

export const KERNEL_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Where the kernel package lives (its dist/ is one level below). */
export const KERNEL_DIR = new URL('..', import.meta.url);
