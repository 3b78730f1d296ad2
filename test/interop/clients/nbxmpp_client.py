#!/usr/bin/python3
"""
The interop matrix's nbxmpp client (Debian python3-nbxmpp, Gajim's XMPP library; run with /usr/bin/python3).
nbxmpp runs on a GLib main loop, so this script is the small program around it that Gajim would be: it logs
in over STARTTLS with nbxmpp's own SASL mechanism choice, fetches the roster, becomes available, sends one
chat message to --peer and waits for one back. The server's certificate is verified against the test CA: it
becomes the process's default TLS database, the one every Gio TLS connection (and so nbxmpp's) trusts.
Each step is a JSON line on stdout; nbxmpp's debug log (with the XML it sends and receives) goes to stderr.
Exits 0 when every step it was asked for happened, 1 otherwise.
"""
import argparse
import json
import logging
import os
import sys

import gi

gi.require_version('Gio', '2.0')
gi.require_version('GLib', '2.0')
from gi.repository import Gio, GLib  # noqa: E402

import nbxmpp  # noqa: E402
from nbxmpp.client import Client  # noqa: E402
from nbxmpp.const import ConnectionProtocol, ConnectionType  # noqa: E402
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
        if self.args.peer:
            self.client.send_stanza(Message(to=self.args.peer, body=self.args.send, typ='chat'))
            report('sent', to=self.args.peer, body=self.args.send)
        else:
            self.finish()

    def on_message(self, _client, stanza, properties):
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
