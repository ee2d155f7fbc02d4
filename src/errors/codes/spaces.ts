import type { CodeTable } from '../catalog.ts';

export const spaceCodes = {
  slug_invalid: {
    status: 400,
    summary: 'Space slugs are 2..55 lowercase letters and digits joined by single dashes.',
  },
  slug_reserved: { status: 400, summary: 'The slug is reserved for the service itself; pick another.' },
  slug_unavailable: {
    status: 409,
    summary: 'Another space uses (or once used) the slug; `details.suggestion` is a free one.',
  },
  invalid_data_location: {
    status: 400,
    summary: 'The data location is not one of auto, ams, bur, dca, dfw.',
  },
  data_location_immutable: { status: 409, summary: 'A space’s data location is fixed when it is created.' },
  space_ref_ambiguous: {
    status: 409,
    summary: 'The reference matches more than one space; use the space id.',
  },
  space_ref_required: { status: 400, summary: 'The operation needs a space: give its id or slug.' },
  space_disabled: { status: 409, summary: 'The space is disabled and can’t take this change.' },
  space_not_disabled: {
    status: 409,
    summary: 'The space is not deleted or disabled, so there is nothing to restore.',
  },
  space_not_restorable: { status: 410, summary: 'The restore window has passed; the space is being purged.' },
  space_no_live_version: { status: 409, summary: 'The space has no live version yet.' },
  thumbnail_not_found: {
    status: 404,
    summary: 'The space has no thumbnail (yet); `details.reason` says why when rendering failed or is off.',
  },
} satisfies CodeTable;
