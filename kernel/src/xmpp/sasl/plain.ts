/**
 * SASL PLAIN (RFC 4616): authzid NUL authcid NUL password, checked against the account's stored
 * credentials (through the verified-credential cache).
 */
import { InvalidJid, nodeprep } from '@service/plugin-api';
import { SaslFailure, type SaslMechanism } from '@service/plugin-api';

export const plainMechanism: SaslMechanism = {
  name: 'PLAIN',
  offered: () => true,
  start(peer, { accounts, admit }) {
    return {
      async step(response) {
        const parts = response.toString('utf8').split('\0');
        if (parts.length !== 3) throw new SaslFailure('malformed-request', 'expected authzid, user name and password separated by NUL');
        const [authzid, authcid, password] = parts as [string, string, string];
        // Some clients send the bare JID as the user name.
        const name = authcid.endsWith(`@${peer.host}`) ? authcid.slice(0, -peer.host.length - 1) : authcid;
        let user: string;
        try {
          user = nodeprep(name);
        } catch (err) {
          if (err instanceof InvalidJid) throw new SaslFailure('not-authorized');
          throw err;
        }
        admit(user);
        if (!(await accounts.checkPassword(user, peer.host, password))) throw new SaslFailure('not-authorized', undefined, user);
        checkAuthzid(authzid, user, peer.host);
        return { success: { user } };
      },
    };
  },
};

/** An authorization identity other than the authenticated account is refused: no impersonation. */
export function checkAuthzid(authzid: string, user: string, host: string): void {
  if (!authzid) return;
  const at = authzid.indexOf('@');
  let same = false;
  try {
    same = at > 0 && nodeprep(authzid.slice(0, at)) === user && authzid.slice(at + 1).toLowerCase() === host;
  } catch {
    same = false;
  }
  if (!same) throw new SaslFailure('invalid-authzid', `this account may not act as ${authzid}`);
}
