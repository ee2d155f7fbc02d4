/**
 * Publishing a dropped .zip or .tar.gz: the archive goes as the `archive` part of a multipart
 * `POST /v1/publish` (the server unpacks it and publishes in one call). XMLHttpRequest rather than
 * the typed client because only it reports upload progress; the answer is the typed PublishReceipt.
 */
import { csrfToken, type Problem, ProblemError, type Schemas } from '../api/client';

export type PublishReceiptData = Schemas['PublishReceipt']['data'];

/** Names the server unpacks as an archive. */
export const ARCHIVE_NAME = /\.(zip|tar\.gz|tgz)$/i;

export function uploadArchive(
  spaceId: string,
  file: File,
  message: string | null,
  signal: AbortSignal,
  onProgress: (sent: number, total: number) => void,
): Promise<PublishReceiptData> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append('payload', JSON.stringify({ spaceId, target: 'production', message }));
    form.append('archive', file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/v1/publish');
    xhr.withCredentials = true;
    const token = csrfToken();
    if (token) xhr.setRequestHeader('x-csrf-token', token);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: { data?: PublishReceiptData } & Partial<Problem>;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = {};
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.data) return resolve(body.data);
      reject(
        new ProblemError(
          body.code
            ? (body as Problem)
            : {
                type: 'about:blank',
                title: `HTTP ${xhr.status}`,
                status: xhr.status,
                detail: `The server answered ${xhr.status}.`,
                code: 'network_error',
                requestId: xhr.getResponseHeader('x-request-id') ?? '',
              },
        ),
      );
    };
    xhr.onerror = () =>
      reject(
        new ProblemError({
          type: 'about:blank',
          title: 'Network error',
          status: 0,
          detail: 'The server could not be reached.',
          code: 'network_error',
          requestId: '',
        }),
      );
    const stop = () => {
      xhr.abort();
      reject(new DOMException('Canceled', 'AbortError'));
    };
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    xhr.onloadend = () => signal.removeEventListener('abort', stop);
    xhr.send(form);
  });
}
