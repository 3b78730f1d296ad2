/**
 * send_message of type groupchat to a room (when mod_muc runs): the message goes into the room through
 * mod_muc, on behalf of `from`, as the spec says it may — from the full JID of an occupant, the bare JID
 * of a service admin, or the bare JID of a subscribed user; anyone else is refused with an error naming
 * `from`, and nothing is sent. Without mod_muc, or to a JID that is not on a MUC service, it is not a room
 * message and send_message routes it as before.
 */
import { CommandError, badArgument, notFound, type Jid, type XmlElement } from '@service/plugin-api';
import { MucError, mucService } from '@service/mod_muc/api';
import type { AdminContext } from '../context.js';

/** Sends `message` into the room `to` names and resolves true, or resolves false when `to` is not on a MUC service. */
export async function sendToRoom(ctx: AdminContext, message: XmlElement, from: Jid, to: Jid): Promise<boolean> {
  const muc = ctx.find(mucService);
  if (!muc || !muc.isService(to.host)) return false;
  if (to.user === undefined) throw badArgument('to', `${to.full} is a MUC service, not a room: address a room (room@${to.host})`);
  if (to.resource !== undefined) throw badArgument('to', `a groupchat message goes to the room's bare JID (${to.bare}), not to an occupant (${to.full})`);
  try {
    await muc.sendGroupchat(to.user, to.host, from, message);
  } catch (err) {
    if (!(err instanceof MucError)) throw err;
    switch (err.kind) {
      case 'not_allowed':
        throw badArgument(
          'from',
          `from: ${from.full} may not send to room ${to.bare} (${err.message}); a groupchat message to a room must come from the full JID of an occupant, the bare JID of a service admin, or the bare JID of a subscribed user`,
        );
      case 'not_found':
        throw notFound(err.message);
      case 'bad_argument':
        throw badArgument('to', err.message);
      case 'conflict':
        throw new CommandError('conflict', err.message);
    }
  }
  return true;
}
