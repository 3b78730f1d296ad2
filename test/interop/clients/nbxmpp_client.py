#!/usr/bin/python3
"""
The interop matrix's nbxmpp client (Debian python3-nbxmpp, Gajim's XMPP library; run with /usr/bin/python3).
nbxmpp runs on a GLib main loop, so this script is the small program around it that Gajim would be: it logs
in over STARTTLS with nbxmpp's own SASL mechanism choice, fetches the roster, becomes available, sends one
chat message to --peer and waits for one back. The server's certificate is verified against the test CA: it
becomes the process's default TLS database, the one every Gio TLS connection (and so nbxmpp's) trusts.
With --muc (group chat, as Gajim joins one): asks the room's disco#info through nbxmpp's MUC module
(request_info), sends the join presence (<x xmlns='http://jabber.org/protocol/muc'/>, no history) as --nick,
reports its self-presence (status 110) and the occupants seen before it, waits for a groupchat message
(--muc-expect), sends one (--muc-send), waits for the room to reflect it, and leaves.
With --mam (the message archive, as Gajim fetches it): pages through the account's whole archive with
nbxmpp's MAM module (make_query, XEP-0059 <after/> the last id of each page, --mam-page per query) until a
page says complete; the results arrive as messages nbxmpp unwraps itself (properties.mam), each page is
reported with its RSM summary and its messages.
Each step is a JSON line on stdout; nbxmpp's debug log (with the XML it sends and receives) goes to stderr.
Exits 0 when every step it was asked for happened, 1 otherwise.
"""
import argparse
import json
import logging
import os
import sys
from datetime import datetime, timezone

import gi

gi.require_version('Gio', '2.0')
gi.require_version('GLib', '2.0')
from gi.repository import Gio, GLib  # noqa: E402

import nbxmpp  # noqa: E402
from nbxmpp.client import Client  # noqa: E402
from nbxmpp.const import ConnectionProtocol, ConnectionType  # noqa: E402
from nbxmpp.namespaces import Namespace  # noqa: E402
from nbxmpp.protocol import JID, Message, Presence  # noqa: E402
from nbxmpp.structs import StanzaHandler  # noqa: E402


def report(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


class Session:
    def __init__(self, args):
        self.args = args
        self.ok = False
        self.loop = GLib.MainLoop()
        jid = JID.from_string(args.jid)
        client = Client(log_context='interop')
        client.set_domain(jid.domain)
        client.set_username(jid.localpart)
        client.set_resource(jid.resource)
        client.set_password(args.password)
        client.set_custom_host(f'{args.host}:{args.port}', ConnectionProtocol.TCP, ConnectionType.START_TLS)
        client.subscribe('connected', self.on_connected)
        client.subscribe('connection-failed', self.on_failed)
        client.subscribe('disconnected', self.on_disconnected)
        client.register_handler(StanzaHandler(name='message', callback=self.on_message, typ='chat', priority=50))
        if args.mam:
            # The results, by query id, as they arrive before each query's IQ result.
            self.mam_results = {}
            self.mam_pages = 0
            self.mam_total = 0
        if args.muc:
            self.room = JID.from_string(args.muc)
            self.occupants = []
            self.joined = False
            self.expected = args.muc_expect is None
            self.reflected = args.muc_send is None
            client.register_handler(StanzaHandler(name='message', callback=self.on_groupchat, typ='groupchat', priority=50))
            client.register_handler(StanzaHandler(name='presence', callback=self.on_muc_presence, priority=50))
        self.client = client

    def run(self):
        self.client.connect()
        GLib.timeout_add_seconds(int(self.args.wait), self.on_timeout)
        self.loop.run()

    def on_connected(self, client, _signal):
        tls_version = client.tls_version
        mechanism = client._sasl._mechanism  # nbxmpp keeps the mechanism it chose only here
        report('session_start', jid=str(client.get_bound_jid()), mechanism=mechanism.name if mechanism else None,
               tls=client.is_stream_secure,
               tls_version=tls_version.value_name if tls_version is not None else None,
               certificate_errors=sorted(str(e.value_nick) for e in (client.peer_certificate[1] or [])))
        if self.args.roster:
            client.get_module('Roster').request_roster(callback=self.on_roster)
        else:
            self.after_roster()

    def on_roster(self, task):
        try:
            roster = task.finish()
        except Exception as err:
            self.fail(f'roster: {err!r}')
            return
        report('roster', items={str(item.jid): {'name': item.name, 'subscription': item.subscription,
                                                'groups': sorted(item.groups)} for item in roster.items or []})
        self.after_roster()

    def after_roster(self):
        self.client.send_stanza(Presence())
        if self.args.muc:
            # Gajim asks the room what it is before joining it.
            self.client.get_module('MUC').request_info(self.room, request_vcard=False, callback=self.on_muc_info)
        elif self.args.peer:
            self.client.send_stanza(Message(to=self.args.peer, body=self.args.send, typ='chat'))
            report('sent', to=self.args.peer, body=self.args.send)
        elif self.args.mam:
            self.mam_query(None)
        else:
            self.finish()

    def on_muc_info(self, task):
        try:
            info = task.finish().info
            report('muc_info', features=sorted(info.features),
                   identities=[{'category': i.category, 'type': i.type, 'name': i.name} for i in info.identities],
                   is_muc=info.is_muc)
        except Exception as err:  # a room that does not exist yet answers item-not-found: the join creates it
            report('muc_info_error', error=str(err))
        presence = Presence(to=f'{self.room}/{self.args.nick}')
        presence.setTag('x', namespace=Namespace.MUC).setTag('history', attrs={'maxchars': '0'})
        self.client.send_stanza(presence)
        report('muc_join_sent', to=f'{self.room}/{self.args.nick}')

    def on_muc_presence(self, _client, stanza, properties):
        if properties.jid is None or properties.jid.bare != self.room.bare:
            return
        if properties.type.is_error:
            report('muc_presence', sender=str(properties.jid), type='error', error=str(properties.error))
            self.fail(f'join refused: {properties.error}')
            return
        user = properties.muc_user
        report('muc_presence', sender=str(properties.jid), type=str(properties.type.value),
               codes=sorted(int(c.value) for c in properties.muc_status_codes or []),
               affiliation=str(user.affiliation.value) if user and user.affiliation else None,
               role=str(user.role.value) if user and user.role else None)
        if properties.is_muc_self_presence and not properties.type.is_unavailable:
            self.joined = True
            report('muc_joined', jid=str(properties.jid), occupants=sorted(self.occupants),
                   codes=sorted(int(c.value) for c in properties.muc_status_codes))
            self.muc_step()
        elif properties.is_muc_self_presence and properties.type.is_unavailable:
            report('muc_left', sender=str(properties.jid))
            self.finish()
        elif not self.joined and not properties.type.is_unavailable:
            self.occupants.append(str(properties.jid))

    def on_groupchat(self, _client, stanza, properties):
        if not properties.from_muc or properties.jid.bare != self.room.bare:
            return
        report('groupchat', sender=str(properties.jid), body=properties.body, subject=properties.subject,
               delayed=properties.user_timestamp is not None)
        if properties.body is None:
            return
        if self.args.muc_expect is not None and properties.body == self.args.muc_expect:
            self.expected = True
        if (self.args.muc_send is not None and properties.body == self.args.muc_send
                and properties.jid.resource == self.args.nick):
            self.reflected = True
        if self.joined:
            self.muc_step()

    def muc_step(self):
        """What comes next: the expected message first, then our own and its reflection, then leaving."""
        if not self.expected:
            return
        if self.args.muc_send is not None and not getattr(self, 'sent_muc', False):
            self.sent_muc = True
            self.client.send_stanza(Message(to=str(self.room), body=self.args.muc_send, typ='groupchat'))
            report('muc_sent', to=str(self.room), body=self.args.muc_send)
            return
        if self.reflected and not getattr(self, 'leaving', False):
            self.leaving = True
            self.client.send_stanza(Presence(to=f'{self.room}/{self.args.nick}', typ='unavailable'))
            report('muc_leaving', room=str(self.room))

    def mam_query(self, after):
        """One page of the own archive, after `after` (None: the oldest page)."""
        self.mam_pages += 1
        query_id = f'nbxmpp-{self.mam_pages}'
        self.mam_results[query_id] = []
        own = self.client.get_bound_jid().bare
        # nbxmpp keeps only a weak reference to a task's callback: a bound method, with the query id as user data.
        self.client.get_module('MAM').make_query(own, queryid=query_id, after=after, max_=self.args.mam_page,
                                                 callback=self.on_mam_page, user_data=query_id)

    def on_mam_page(self, task):
        query_id = task.get_user_data()
        try:
            data = task.finish()
        except Exception as err:
            self.fail(f'MAM query: {err!r}')
            return
        messages = self.mam_results.pop(query_id)
        rsm = data.rsm
        report('mam_page', direction='forward', complete=data.complete, first=rsm.first, first_index=rsm.first_index,
               last=rsm.last, count=rsm.count, archive=str(data.jid), messages=messages)
        self.mam_total += len(messages)
        if data.complete or not messages:
            report('mam_done', direction='forward', messages=self.mam_total)
            self.finish()
        else:
            self.mam_query(rsm.last)

    def on_message(self, _client, stanza, properties):
        if properties.mam is not None:
            # A result of a MAM query, which nbxmpp unwrapped: the archived message, its archive id and time.
            results = self.mam_results.get(properties.mam.query_id) if self.args.mam else None
            if results is None:
                report('mam_unexpected', query_id=properties.mam.query_id, body=stanza.getBody())
                return
            results.append({'id': properties.mam.id, 'queryid': properties.mam.query_id,
                            'archive': str(properties.mam.archive), 'from': str(stanza.getFrom()),
                            'to': str(stanza.getTo()), 'body': stanza.getBody(),
                            # nbxmpp gives the archive time (the <delay/> stamp) as seconds since the epoch.
                            'stamp': datetime.fromtimestamp(properties.mam.timestamp, timezone.utc).isoformat()})
            return
        report('received', sender=str(stanza.getFrom()), body=stanza.getBody())
        if self.args.peer and stanza.getFrom() is not None and stanza.getFrom().bare == JID.from_string(self.args.peer).bare:
            self.finish()

    def on_failed(self, client, _signal):
        self.fail(f'connection failed: {client.get_error()}')

    # A certificate that does not verify ends here too, with the error (StreamError.BAD_CERTIFICATE, ...).
    def on_disconnected(self, client, _signal):
        report('disconnected', error=str(client.get_error()) if client.has_error else None)
        self.loop.quit()

    def on_timeout(self):
        self.fail(f'timed out after {self.args.wait}s')
        return False

    def finish(self):
        self.ok = True
        self.client.disconnect()

    def fail(self, error):
        report('error', error=error)
        if self.client.state.name not in ('DISCONNECTED', 'DISCONNECTING'):
            self.client.disconnect(immediate=True)
        self.loop.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--jid', required=True, help='full JID: user@domain/resource')
    parser.add_argument('--password', required=True)
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--ca', required=True)
    parser.add_argument('--peer', help='send a chat message to this JID and wait for one from it')
    parser.add_argument('--send', default='hello from nbxmpp')
    parser.add_argument('--roster', action='store_true')
    parser.add_argument('--wait', type=float, default=15)
    parser.add_argument('--muc', help='join this room (XEP-0045) after the session started')
    parser.add_argument('--nick', default='gajim', help='the nick in --muc')
    parser.add_argument('--muc-expect', help='wait for a groupchat message with this body')
    parser.add_argument('--muc-send', help='send this groupchat message (after what is expected arrived)')
    parser.add_argument('--mam', action='store_true', help='fetch the whole archive, oldest page first (XEP-0313)')
    parser.add_argument('--mam-page', type=int, default=50, help='RSM <max/> of each archive query')
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(asctime)s %(levelname)s %(name)s %(message)s')
    report('version', nbxmpp=nbxmpp.__version__, glib=f'{GLib.MAJOR_VERSION}.{GLib.MINOR_VERSION}.{GLib.MICRO_VERSION}')
    # With a relative anchors path the database trusted nothing here (glib-networking 2.74): make it absolute.
    database = Gio.TlsFileDatabase.new(os.path.abspath(args.ca))
    Gio.TlsBackend.get_default().set_default_database(database)
    session = Session(args)
    session.run()
    sys.exit(0 if session.ok else 1)


if __name__ == '__main__':
    main()
