// Encrypts card data as a developer's JavaScript would, with the npm jose
// package: an implementation independent of go-jose, so that Hitch's test
// (internal/card/jose_interop_test.go) catches a mismatch between the two.
//
// stdin:  {"jwk": <public JWK from GET /jwe/key>, "payload": "<plaintext>"}
// stdout: the compact JWE
import { CompactEncrypt, importJWK } from 'jose';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { jwk, payload } = JSON.parse(input);

const key = await importJWK(jwk, 'RSA-OAEP-256');
const jwe = await new CompactEncrypt(new TextEncoder().encode(payload))
  .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: jwk.kid })
  .encrypt(key);
process.stdout.write(jwe);
