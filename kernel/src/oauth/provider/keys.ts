/**
 * The secrets oidc-provider needs — keys to sign its cookies and a key pair to sign what it signs — made
 * once and kept in `<data_dir>/oauth-keys.json` (mode 0600), so a restart does not log everyone out of
 * the authorization server or break an authorization in progress.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ProviderKeys {
  readonly cookieKeys: string[];
  readonly signingKey: Record<string, unknown>;
}

const FILE = 'oauth-keys.json';

function fresh(): ProviderKeys {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    cookieKeys: [randomBytes(32).toString('base64url')],
    signingKey: { ...jwk, kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'ES256' },
  };
}

function valid(value: unknown): value is ProviderKeys {
  const keys = value as Partial<ProviderKeys> | null;
  return !!keys && Array.isArray(keys.cookieKeys) && keys.cookieKeys.length > 0 && typeof keys.signingKey === 'object' && keys.signingKey !== null;
}

export async function loadProviderKeys(dataDir: string): Promise<ProviderKeys> {
  const file = join(dataDir, FILE);
  try {
    const stored: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (valid(stored)) return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
  }
  const keys = fresh();
  await writeFile(file, JSON.stringify(keys), { mode: 0o600 });
  await chmod(file, 0o600);
  return keys;
}
