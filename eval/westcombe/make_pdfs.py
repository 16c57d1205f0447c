#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/westcombe/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["westcombe/intensive-courses-guide"] = (
    "Intensive driving courses: guide and terms",
    "Westcombe School of Motoring - Intensive courses guide - courses starting from 2 February 2026",
    """
# Intensive driving courses
Guide and terms for courses starting on or after 2 February 2026.
Prices are in pounds sterling (GBP). Driving tuition is exempt from VAT.

1. CHOOSING A COURSE
Intensive courses fit all your lessons into a few weeks, with your
practical test at the end. They suit pupils who have already passed the
theory test and can keep their diary clear for the whole course.

Course          Lesson hours   Spread over   Manual       Automatic
Fast Track 20   20 hours       1 week        GBP 840      GBP 945
Fast Track 30   30 hours       2 weeks       GBP 1,230    GBP 1,380
Steady 40       40 hours       4 weeks       GBP 1,590    GBP 1,790
Refresher 10*   10 hours       1 week        GBP 430      GBP 485
* Refresher 10 is for drivers with a full licence who want to regain
  confidence. It does not include a practical test.

Every course except Refresher 10 includes the test day package and the
DVSA weekday practical test fee of GBP 62. If you choose an evening or
weekend test, you pay DVSA the difference.

2. BEFORE YOU BOOK
- You must have passed your theory test. We need your theory test pass
  certificate number when you book.
- You take a 2-hour assessment lesson first, so that we can recommend
  the right course. It costs GBP 82 (manual) or GBP 92 (automatic). If
  you book a course within 30 days of the assessment, we take the full
  price of the assessment off the course.
- We won't put pupils who have never driven on Fast Track 20. Sev-
  eral pupils each year need more hours than they expected.

3. PAYING FOR YOUR COURSE
A deposit of GBP 250 secures your course dates. The balance is due 28
days before the course starts. If you book less than 28 days before
the start date, you pay the full price when you book.
<<PAGE>>
4. DURING THE COURSE
Lessons run between 08:00 and 18:00. You'll drive for no more than 5
hours a day, with a break of at least 30 minutes after every 2 hours of
driving. Your instructor stays the same for the whole course wherever
possible.

We book your practical test for the last day of the course. If DVSA has
no test within 10 working days after the course ends, we will offer
you new course dates or a full refund.

5. IF YOU CANCEL
Notice before the start date     What you get back
28 days or more                  Everything except the deposit
14 to 27 days                    Half of the balance you've paid
Less than 14 days                Nothing, unless we fill your place
If we fill your place, we refund everything except GBP 100.

You can move your course to new dates once without charge, with at
least 28 days' notice. Moving it a second time counts as cancelling.

6. IF YOU DON'T PASS
Our retest package gives you 4 hours of lessons, the test day package
and a new DVSA weekday test fee for GBP 410 (manual) or GBP 460
(automatic). DVSA won't let you take a retest for 10 working days.

7. QUESTIONS
Call your branch or email courses@westcombe-driving.example. Full
lesson terms are on our help centre.
""",
)

DOCS["parkly/citation-fine-schedule"] = (
    "City of Ridgeport Parking Fine Schedule 2026",
    "City of Ridgeport - Department of Transportation - Parking Fine Schedule - effective Jan 1, 2026",
    """
# Parking Fine Schedule
City of Ridgeport, Department of Transportation, Parking Enforcement
Effective January 1, 2026 (Ordinance 2025-118). Amounts in US dollars.

1. FINES BY VIOLATION CODE
Code    Violation                                       Fine
RP-01   No valid paid session, or expired meter         USD 45
RP-02   Over the posted time limit                      USD 55
RP-03   Parked outside a marked space                   USD 40
RP-04   Zone E on an event day without event payment    USD 70
RP-05   No valid permit in a Residential Permit Area    USD 75
RP-07   Vehicle not charging in an EV charging bay      USD 95
RP-09   Blocking a driveway or alley                    USD 110
RP-12   Within 15 feet of a fire hydrant                USD 125
RP-14   Disabled space, no placard or plate*            USD 350
* Set by state law. An RP-14 fine cannot be reduced at an administra-
  tive review or hearing.

A citation is issued for each violation. A vehicle parked over the time
limit in an EV bay may get both an RP-02 and an RP-07 citation.

2. LATE PENALTIES
Fines must be paid or contested within 21 calendar days of the issue
date. After that:
Day 22        First late penalty          USD 25
Day 61        Second late penalty         USD 35
Day 91        Referred to collections     plus 20 percent of the balance
Contesting a citation pauses these dates until a decision is issued.
<<PAGE>>
3. PAYMENT PLANS
If you owe USD 200 or more in fines and penalties, you can ask for a
payment plan of up to 6 monthly installments. The setup fee is USD 5,
and you must apply before any citation is referred to collections.
Residents with a household income below the City's low-income limit may
ask to do community service instead of paying, at USD 20 per hour of
service.

4. BOOTS AND TOWS
A vehicle with 5 or more citations that have been unpaid for more than
90 days may be booted. To remove a boot you pay all the fines and
penalties and a boot removal fee of USD 150. If the boot is not removed
within 48 hours, the vehicle is towed. Towing costs USD 185, plus
storage of USD 30 per day.

5. HOW TO PAY
- Online at ridgeport.example/citations (no processing fee).
- In the Parkly app, under Citations (USD 2.50 processing fee).
- By mail: City of Ridgeport, Parking Payments, PO Box 4410. Checks
  and money orders only. Do not send cash.
- In person at the Parking Adjudication Office, 200 Civic Plaza,
  Room 114, Monday to Friday 8:30 a.m. to 4:30 p.m.

6. CONTESTING A CITATION
Ask for an administrative review within 21 days of the citation date.
See the Parkly help center article on citations and appeals, or the
City's website, for the hearing and court steps.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "westcombe make_pdfs.py")


if __name__ == "__main__":
    main()
