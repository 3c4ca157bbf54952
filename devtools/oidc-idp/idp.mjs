// A real OpenID Provider for the players' pages' OIDC sign-in (tests/ui/test_play_oidc.py, and
// trying the flow by hand): panva's certified oidc-provider, with one client, PKCE required,
// one test account and the library's own development login and consent pages.
// NEVER a production identity provider: any password signs the test account in.
//
//   node idp.mjs --port 9100 --issuer http://localhost:9100 \
//     --redirect-uri http://127.0.0.1:8000/play/oidc/callback [--client-id sng-play]
//     [--client-secret S] [--login ada]
//
// Prints one line `ready <issuer>` on stdout once it listens (on 127.0.0.1 only).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

const { values: opt } = parseArgs({
  options: {
    port: { type: 'string' },
    issuer: { type: 'string' },
    'redirect-uri': { type: 'string' },
    'client-id': { type: 'string', default: 'sng-play' },
    'client-secret': { type: 'string', default: '' },
    login: { type: 'string', default: 'ada' },
  },
});
if (!opt.port || !opt.issuer || !opt['redirect-uri']) {
  console.error('usage: node idp.mjs --port P --issuer URL --redirect-uri URL [...]');
  process.exit(2);
}

// A fresh signing key per run: the API reads it from /jwks, as from any IdP.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-idp-1', use: 'sig', alg: 'RS256' };

const secret = opt['client-secret'];
const provider = new Provider(opt.issuer, {
  clients: [{
    client_id: opt['client-id'],
    ...(secret ? { client_secret: secret } : {}),
    token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
    redirect_uris: [opt['redirect-uri']],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  pkce: { required: () => true }, // S256 is the only method this version offers
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  features: { devInteractions: { enabled: true } },
  // The one test account: the dev login page accepts any password for it, nobody else.
  async findAccount(_ctx, id) {
    if (id !== opt.login) return undefined;
    return { accountId: id, async claims() { return { sub: id, name: 'Ada (test IdP)' }; } };
  },
});

provider.listen(Number(opt.port), '127.0.0.1', () => {
  console.log(`ready ${opt.issuer}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
