// Package detection finds the merchant accounts a user holds and answers
// developers' questions about them, such as whether the user has an account
// at a merchant they name. Names are matched to the merchant catalog by
// Matcher, which forgives case, punctuation, company suffixes and small
// typos but never confuses two catalog merchants.
package detection
