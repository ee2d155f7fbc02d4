/** The thumbnails area's tables (issue 23; migration 0020). */
export interface ThumbnailTables {
  /** The picture of a space's live front page; one row per space. */
  space_thumbnails: {
    space_id: string;
    /** The live version the picture (or the failure) is of. */
    version_id: string;
    /** The image's digest in the blob store; null when the last rendering failed or was skipped. */
    sha256: string | null;
    size: number;
    /** `image/png`. */
    content_type: string;
    /** Why there is no picture of this version (Chromium missing, timeout, …); null on success. */
    last_error: string | null;
    rendered_at: string;
  };
}
