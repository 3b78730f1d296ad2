#!/usr/bin/python3
"""
The interop matrix's slixmpp client (Debian python3-slixmpp; run with /usr/bin/python3). Logs in over
STARTTLS, verifying the server against the test CA, with slixmpp's own SASL mechanism choice (or X-OAUTH2 when
given a token), fetches the roster, becomes available, sends one chat message to --peer and waits for one back.
It reports each step as a JSON line on stdout for the test to read; slixmpp's debug log goes to stderr, which the
test shows when something fails. Exits 0 when every step it was asked for happened, 1 otherwise.
"""
import argparse
import asyncio
import json
import logging
import ssl
import sys

import slixmpp


def report(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


class Client(slixmpp.ClientXMPP):
    def __init__(self, args):
        super().__init__(args.jid, args.password or '')
        self.args = args
        self.ok = False
        self.reply = asyncio.Event()
        self.ca_certs = args.ca
        if args.token:
            # slixmpp's X-OAUTH2 takes the token from this credential; there is no password to fall back on.
            self.credentials['access_token'] = args.token
        self.add_event_handler('session_start', self.start)
        self.add_event_handler('message', self.on_message)
        self.add_event_handler('failed_auth', lambda _: report('failed_auth', mechanism=self.mechanism()))
        self.add_event_handler('auth_success', lambda _: report('auth_success', mechanism=self.mechanism()))
        self.add_event_handler('disconnected', lambda _: report('disconnected'))

    def mechanism(self):
        mech = self.plugin['feature_mechanisms'].mech
        return mech.name if mech is not None else None

    async def start(self, _):
        # getpeercert() is empty unless the certificate was verified (here: against --ca, for the JID's domain).
        report('session_start', jid=str(self.boundjid), mechanism=self.mechanism(), tls=self.is_secure(),
               verified=self.is_secure() and bool(self.socket.getpeercert()))
        try:
            if self.args.roster:
                await self.get_roster(timeout=10)
                # What the library now holds as the roster (built from the server's result).
                items = {}
                for jid in self.client_roster.keys():
                    item = self.client_roster[jid]
                    items[str(jid)] = {'name': item['name'], 'subscription': item['subscription'], 'groups': list(item['groups'])}
                report('roster', items=items)
            self.send_presence()
            if self.args.peer:
                self.send_message(mto=self.args.peer, mbody=self.args.send, mtype='chat')
                report('sent', to=self.args.peer, body=self.args.send)
                await asyncio.wait_for(self.reply.wait(), self.args.wait)
            self.ok = True
        except Exception as err:  # reported, and the exit status says it failed
            report('error', error=repr(err))
        finally:
            self.disconnect()

    def on_message(self, msg):
        if msg['type'] in ('chat', 'normal'):
            report('received', sender=str(msg['from']), body=msg['body'])
            if self.args.peer and msg['from'].bare == slixmpp.JID(self.args.peer).bare:
                self.reply.set()

    def is_secure(self):
        return isinstance(self.socket, (ssl.SSLSocket, ssl.SSLObject))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--jid', required=True)
    parser.add_argument('--password')
    parser.add_argument('--token')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--ca', required=True)
    parser.add_argument('--peer', help='send a chat message to this JID and wait for one from it')
    parser.add_argument('--send', default='hello from slixmpp')
    parser.add_argument('--roster', action='store_true')
    parser.add_argument('--wait', type=float, default=15)
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format='%(asctime)s %(levelname)s %(name)s %(message)s')
    report('version', slixmpp=slixmpp.__version__, python=sys.version.split()[0])
    client = Client(args)
    if args.token:
        client['feature_mechanisms'].use_mech = 'X-OAUTH2'
    client.connect(address=(args.host, args.port), use_ssl=False, force_starttls=True, disable_starttls=False)
    client.loop.run_until_complete(client.disconnected)
    sys.exit(0 if client.ok else 1)


if __name__ == '__main__':
    main()
