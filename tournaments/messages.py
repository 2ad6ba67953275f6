"""Error messages users see, as named constants so views, services and tests share one wording."""

VALIDATION_FAILED = "Some fields are invalid; see errors."
NOT_FOUND = "Not found."
SERVER_ERROR = "Something went wrong on our side; please try again later."

USERNAME_TAKEN = "This username is already taken."
INVALID_CREDENTIALS = "Wrong username or password."
