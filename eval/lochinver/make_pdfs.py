#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/lochinver/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["lochinver/visitor-and-society-guide"] = (
    "Lochinver Golf Club: visitor and society guide 2026",
    "Lochinver Golf Club - Visitor and society guide - season 2026-04-01 to 2026-10-31",
    """
# Visitor and Society Guide 2026
Lochinver Golf Club, Culag Road, Lochinver, Lairg IV27 4ZZ
For golf societies, company days and other groups of 12 or more players.

1. SOCIETY PACKAGES
All prices are per player and include VAT at 20%. Every package includes
a starter on the first tee, printed scorecards and use of the locker rooms.

Package             Includes                              Mon-Thu    Fri-Sun
Suilven Day         Coffee and bacon roll, 18 holes on    GBP 120    GBP 140
                    the Suilven Course, 2-course meal
Links and Nine      18 holes on the Suilven Course, 9     GBP 135    GBP 155
                    holes on the Inver Nine, soup and
                    sandwiches
Twilight Society    18 holes from 3:30pm, 2-course        GBP 85     n/a
                    supper
Winter Warmer*      18 holes, soup and sandwiches         GBP 55     GBP 65
* Winter Warmer runs from 1 November to 31 March only. All other packages
  run from 1 April to 31 October.

Society tee times are Monday to Friday between 10:00 and 12:00, and on
Sundays from 13:00. We do not take societies on Saturdays or on the days
of the Club Championships.

2. BOOKING AND DEPOSITS
- We hold a provisional booking for 14 days while you gather your group.
- To confirm the booking, pay a deposit of GBP 20 per player. Deposits are
  not refundable.
- Final numbers and the balance are due 28 days before the date of play.
- After you have given final numbers, players who drop out can be
  replaced by someone else, but we cannot refund them.
- Dates for the 2027 season open for booking on 01/09/2026.
<<PAGE>>
3. ON THE DAY
- The organiser plays free: one free place for every 20 paying players.
- Every player must hold a Handicap Index of 36.0 or lower to play the
  Suilven Course. Players without one can play the Inver Nine.
- Buggies must be reserved in advance, up to a maximum of 6 buggies per
  society, at the visitor rate.
- The pro shop can engrave prizes at GBP 6 per item if you order them at
  least 7 days before the day. We can also set out a prize table in the
  Harbour Room at no charge.
- Please make sure everyone knows the dress code before they arrive. The
  duty manager's decision on dress is final.

4. IF THE COURSE IS CLOSED
If the club closes the Suilven Course on the day because of the weather,
you can choose a full refund of the deposit and balance, or a new date
within 12 months at the same price. If play is stopped part of the way
through the round, the club's rain check rules apply to each player. We
can't offer refunds when the course is open but the weather is poor; the
Caddie Bar has an open fire for exactly those days.

5. CONTACT
Society bookings: 01632 960415 or societies@lochinvergolf.example.
The club office is open Monday to Friday, 09:00 to 16:00, from April to
September. For other visitor questions, see the Green fees page and the
Booking page in our help centre. Please quote your booking reference,
which starts with SOC, in all cor-
respondence.
""",
)

DOCS["tutorly/schools-and-group-tutoring-guide"] = (
    "Tutorly for Schools and Groups: price guide 2026",
    "Tutorly Pty Ltd - Schools and group tutoring - price guide for the 2026 school year",
    """
# Tutorly for Schools and Groups
Price guide for the 2026 school year. Prices are in Australian dollars
(AUD) and include GST. Issued 12 December 2025.

1. GROUP SESSIONS FOR FAMILIES
Families can book small group sessions for 2 to 4 students who study the
same subject at the same year level, for example siblings or friends.
Sessions are 60 minutes, online, with one tutor.

Group size     Per student, Years 3-10    Per student, Years 11-12
2 students     AUD 42.00                  AUD 52.00
3 students     AUD 36.00                  AUD 45.00
4 students     AUD 31.00                  AUD 39.00

Every student in the group must be booked at least 24 hours before the
session. If a student cancels later than that, the others still pay the
price for the original group size. Group sessions are not available for
Foundation to Year 2.

2. SCHOOL PARTNERSHIPS
Schools can buy tutoring for their students in blocks of hours each
term. Tutors are chosen and briefed by our Schools team.

Service                                     Price (AUD)
1:1 tutoring, any subject and year level    58.00 per hour
Small group, up to 6 students               132.00 per hour
Exam revision workshop, up to 20 students   480.00 per 2-hour workshop
Teacher dashboard and progress reports      Included

The minimum booking is 20 hours per term per school. We invoice at the
end of each month, and invoices are payable within 30 days of the invoice
date. Please give us a purchase order number with each booking.
<<PAGE>>
3. HOW TERMS WORK
- Hours are booked for a school term (for example, Term 2 runs from
  20/04/2026 to 26 June 2026 in NSW; we follow the dates in your state).
- Unused hours can be carried over to the next term, but not beyond the
  end of the school year.
- A scheduled session can be cancelled with 2 school days' notice. Later
  cancellations are charged in full.
- Term 3 bookings close on Friday 19 June 2026; Term 4 bookings close on
  2026-09-11.

4. SAFEGUARDING
All tutors hold a verified working with children clearance for their
state or territory, and every session is recorded. For school bookings
we keep recordings for 90 days, and the school's nominated safeguarding
contact can view them on request. Students join with a school-issued
link; they don't need their own Tutorly account.

5. GETTING STARTED
1. Email schools@tutorly.example or call (02) 5550 1234 to book a
   20-minute online meeting with our Schools team.
2. We send you a proposal and a partnership agreement within 5 business
   days.
3. You send a list of students, subjects and preferred times.
4. Sessions start within 10 business days of receiving the list.
The Schools team is available 8:30am to 4:30pm (Sydney time), Monday to
Friday, during school terms. Invoices and statements come from our ac-
counts team at billing@tutorly.example.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "lochinver make_pdfs.py")


if __name__ == "__main__":
    main()
