import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * A throwaway self-signed P-256 certificate (2 days) written into `dir` as cert.pem and key.pem,
 * for `subject` (a CN) and `altNames` (`DNS:…`, `IP:…`).
 */
export function selfSignedCertificate(
  dir: string,
  subject: string,
  altNames: string[],
): { cert: string; key: string } {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${subject}`,
      '-addext',
      `subjectAltName=${altNames.join(',')}`,
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}
