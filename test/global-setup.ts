export default function setup(): void {
  if (!process.env.SPACES_TEST_DATABASE_URL) {
    process.stdout.write(
      'note: SPACES_TEST_DATABASE_URL is not set; PostgreSQL runs are skipped (SQLite only).\n',
    );
  }
}
