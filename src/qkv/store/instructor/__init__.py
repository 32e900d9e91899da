"""What an instructor reads and manages: courses and their staff, the instructor's desk, the class at a
glance, the gradebook and CSV exports a spreadsheet opens safely."""
